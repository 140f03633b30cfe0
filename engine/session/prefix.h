/* prefix.h — the prefix cache: snapshots of prompt beginnings shared by
 * every session of the machine (prefix.c). */
#ifndef REMORA_SESSION_PREFIX_H
#define REMORA_SESSION_PREFIX_H
#include <stdint.h>
#include "engine.h"

/* An entry of the RAM tier: the bytes its file would hold. */
typedef struct prefix_ram {
    char name[256];             /* the file's name */
    int tokens;
    uint64_t hash;              /* of its ids, as in the name */
    unsigned char *buf;
    size_t bytes;
    uint64_t used;              /* prefix_cache.clock when stored or restored last */
} prefix_ram;

/* The prefix cache as a session uses it (prefix.c). */
typedef struct prefix_cache {
    char dir[4096];             /* "" when the cache is off */
    uint64_t limit;             /* bytes the entries may take */
    /* the RAM tier: the most recent entries, before the disk */
    uint64_t ram_limit;         /* bytes it may hold; 0 off */
    uint64_t ram_bytes;
    prefix_ram *ram;
    int nram, ramcap;
    uint64_t clock;
    int ram_restores, ram_spills;   /* restores it served; entries it moved to the disk */
    int restored_ram;           /* tokens the last restore took from RAM (0: none, or from the disk) */
    char in_use[256];           /* the entry restored last: never evicted by this session */
    char pass_entry[256];       /* written at the last pass boundary of the prompt in progress */
    int cap;                    /* a capture in progress: its position, 0 none */
    struct snap_out *capw;      /* its writer (in memory when capram) */
    int capram;
    char cap_name[256];
    int stores, restores;       /* entries written and used by this session */
    rm_err error;               /* the last failure to write an entry, "" none */
} prefix_cache;

/* Shorter prefixes are not kept: on the embedded model 32 tokens are
 * computed in about as long as an entry takes to write and read back. */
#define PREFIX_MIN_TOKENS 32
/* The RAM tier's default: 1 GB, at most an eighth of the model's RAM
 * budget and an eighth of the default one (60% of the available memory). */
#define PREFIX_RAM_DEFAULT_GB 1.0
/* Where the cache is and how large its tiers may grow, from o, the RAM
 * budget of the model (bytes) and the environment; -1 with a message for a
 * bad REMORA_PREFIX_CACHE_GB or REMORA_PREFIX_RAM_GB. */
int  prefix_open(prefix_cache *pc, const rm_open_opts *o, uint64_t ram_budget, rm_err *err);
/* Writes the RAM tier's entries to the disk and frees it. */
void prefix_close(rm_session *s);
/* Restores the longest cached prefix of prompt[0..np) (an entry of exactly
 * np tokens only with its logits), from the RAM tier before the disk;
 * returns its tokens, 0 for none (pc->restored_ram: those from RAM). */
int  prefix_restore(rm_session *s, const int32_t *prompt, int np);
/* Stores the state (at pos = s->st's position, ids s->seq) as an entry,
 * with logits when not NULL; `pass` marks one taken at a pass boundary,
 * which replaces the one the prompt's previous pass boundary left. Returns
 * where it went: PREFIX_IN_RAM, PREFIX_ON_DISK, or 0 (not written: there
 * already, too short, or it failed). */
enum { PREFIX_IN_RAM = 1, PREFIX_ON_DISK = 2 };
int  prefix_store(rm_session *s, int pos, const float *logits, int pass);
/* A capture inside a pass (rm_forward_ctl.capture): begin writes the
 * header and ids, layer writes each layer as the pass reaches the
 * position, end commits it (ok) or drops it. */
int  prefix_capture_begin(rm_session *s, int pos);
void prefix_capture_layer(rm_session *s, int layer);
void prefix_capture_end(rm_session *s, int ok);
/* The end of a prompt's feed: forgets its pass-boundary entry. */
void prefix_prompt_done(rm_session *s);

#endif
