/* st.h — safetensors checkpoints: one file, or shards named by
 * model.safetensors.index.json. Every header is validated before a byte of
 * data is trusted; tensors are indexed by name with their shard, offset and
 * size. Nothing is mapped: small tensors are read with st_pread, weight
 * matrices by the store's reader pool (io/store.h). */
#ifndef REMORA_ST_H
#define REMORA_ST_H
#include <stdint.h>
#include <stddef.h>
#include <jansson.h>
#include "engine.h"

typedef enum {
    ST_BOOL, ST_U8, ST_I8, ST_F8_E4M3, ST_F8_E5M2, ST_F8_E8M0, ST_I16, ST_U16, ST_F16,
    ST_BF16, ST_I32, ST_U32, ST_F32, ST_I64, ST_U64, ST_F64, ST_F4, ST_NDTYPES
} st_dtype;

#define ST_MAX_DIMS 8

typedef struct st_tensor {
    char    *name;
    st_dtype dtype;
    int      ndim;
    int64_t  shape[ST_MAX_DIMS];
    int      shard;         /* index into st_set.shards */
    uint64_t offset;        /* absolute byte offset in the shard file */
    uint64_t nbytes;
} st_tensor;

typedef struct st_shard {
    char    *path;
    int      fd;
    uint64_t size;          /* file size */
    uint64_t data_start;    /* 8 + header length */
} st_shard;

typedef struct st_set {
    char      *dir;
    st_shard  *shards;
    int        nshards, shards_cap;
    st_tensor *tensors;
    int        ntensors, tensors_cap;
    int       *hash;        /* open addressing: tensor index + 1, 0 = empty */
    int        hash_cap;
    unsigned char *used;    /* when not NULL: [ntensors], st_find marks what it finds
                             * (the loader's check that every tensor is used) */
} st_set;

/* Opens DIR/model.safetensors.index.json and its shards, or a single
 * DIR/model.safetensors. Validates every header (see st.c). */
int  st_open(const char *dir, st_set **out, rm_err *err);
void st_close(st_set *s);
/* Parses and validates one shard file, appending its tensors; exposed for the
 * fuzzer and the bad-input tests. */
int  st_open_file(const char *path, st_set **out, rm_err *err);

/* The same validation for a header held in memory (stream-mode setup fetches
 * headers before the shard exists): hlen bytes of JSON of a shard named `name`
 * whose file is file_size bytes long. The set has one shard and no fd. */
int  st_parse_header(const char *name, const void *hdr, uint64_t hlen, uint64_t file_size, st_set **out,
                     rm_err *err);
/* The header length from a shard's first 8 bytes (little-endian). */
uint64_t st_header_len(const uint8_t lenb[8]);
/* model.safetensors.index.json read: the document, its weight map and the
 * distinct shard names in order of first appearance (at most CAP_SHARDS,
 * each a plain file name). st_open and `remora setup` read it this way. */
typedef struct st_index {
    json_t *root, *wm;
    char **shards;
    int nshards;
} st_index;
int  st_index_parse(const char *text, size_t len, const char *name, st_index *ix, rm_err *err);
void st_index_free(st_index *ix);
/* Whether a shard name from the index is a plain file name inside the model
 * directory (no '/', no "..", not empty). */
int  st_safe_shard_name(const char *n);

const st_tensor *st_find(const st_set *s, const char *name);
/* Reads the first len bytes of tensor t (len <= t->nbytes) into dst. */
int         st_pread(const st_set *s, const st_tensor *t, void *dst, size_t len, rm_err *err);
int64_t     st_numel(const st_tensor *t);
const char *st_dtype_name(st_dtype d);

#endif
