/* source_int.h — the inside of a stream-mode source (struct remote), shared
 * by source.c (opening it, the reader hook) and pool.c (the pool status and
 * `remora fetch`); engine-internal, private to remote/. */
#ifndef REMORA_SOURCE_INT_H
#define REMORA_SOURCE_INT_H
#include <pthread.h>
#include "remote/source.h"
#include "remote/http.h"

/* The cache leaves this much of the disk free: 2 GB, or a twentieth of a
 * smaller file system (a fixed 2 GB made any disk under 2 GB "full"). */
#define DISK_RESERVE_MAX (2ull << 30)
uint64_t remote_disk_reserve(const char *dir);
#define RX_WHY 32                   /* failure reasons kept: 4x the default reader threads */

typedef struct rx_seg { uint64_t off, len; } rx_seg;
typedef struct rx_key { int shard, first, nseg; uint64_t raw; } rx_key;   /* nseg 0: not an expert */

struct remote {
    char *dir;
    char source[1024];
    int full;
    const st_set *st;
    int L, E;
    rx_key *keys;               /* [L*E] */
    rx_seg *segs;
    unsigned char *in_shard;    /* [L*E]: the manifest says the shard holds it */
    unsigned char *verified;    /* [L*E]: cache file checked (or written) by this process */
    char **etag;                /* [shard]: its ETag at setup, or NULL (none recorded) */
    uint64_t *rev;              /* [shard]: xc_revision of it, for the cache trailers */
    int nshards;
    http_client *net;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int *busy, nbusy, busy_cap; /* keys being fetched */
    uint64_t served, damaged, uncached;     /* atomic */
    /* why recent reads failed, by expert: every reader thread can fail at
     * once (a stalled server), and each expert's error must name its own
     * cause, so one slot would be overwritten before it was asked for */
    struct { int key; char msg[768]; } why[RX_WHY];
    int why_next;
};

/* Fills img (the expert's raw bytes) with expert `key`: from the cache file,
 * else downloaded and then cached. must_cache: a cache file that cannot be
 * written is an error (remora fetch) rather than a skipped copy (a run). */
int remote_obtain(remote *x, int key, uint8_t *img, int must_cache, unsigned since, int *from_net, rm_err *err);

#endif
