/* test_prefix.c — session/prefix.c, the prefix cache, on the embedded model
 * and kl-tiny: a new conversation that begins with a system prompt an
 * earlier one had restores it (the capture at the end of the first message)
 * and samples from the logits a session without the cache does; one that
 * differs in one token restores nothing; the same prompt again restores it
 * whole; an entry whose ids are not those its name promises is refused
 * (checked id by id, not by hash) and removed; a prompt stopped after some
 * passes leaves its last pass boundary, from which the same prompt goes
 * on; the cache stays within its bound, least recently used out first,
 * never the entry in use; it is off at 0 or below, and a bad
 * REMORA_PREFIX_CACHE_GB is refused with its value.
 * The RAM tier, on both fixture families: the entries of a session stay in
 * memory (none on the disk) until it closes; a new conversation in the same
 * session restores its system prompt, and its whole prompt, from RAM, with
 * the logits a session without the cache and a restore from the disk give;
 * a budget of a few MB holds what fits and moves the least recently used
 * entries to the disk, from where they are restored; a bad
 * REMORA_PREFIX_RAM_GB is refused with its value.
 */
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include "tests/unit/test.h"
#include "tests/unit/engine/helpers.h"
#include "tests/unit/engine/turns.h"
#include "session/snapshot.h"
#include "base/crc.h"

static const char *const sys1 =
    "You are a careful assistant for a lighthouse museum. Answer questions about the lighthouse, its keepers, "
    "its lamps and its history, briefly and in plain words, and say so when you do not know.";
static const char *const sys1_near =
    "You are a careful assistant for a lighthouse museum. Answer questions about the lighthouse, its keepers, "
    "its lamps and its history, briefly and in plain words, and say so when you do not care.";

static rm_session *ram_session(const char *mdir, const char *cache, double gb, double ram_gb, int chunk)
{
    rm_open_opts oo = { .prefix_cache_gb = gb, .prefix_cache_dir = cache, .prefill_chunk = chunk,
                        .prefix_ram_gb = ram_gb };
    rm_session *s = NULL;
    rm_err err;
    if (rm_session_open(mdir, &oo, &s, &err)) fprintf(stderr, "    %s\n", err.msg);
    return s;
}

/* The disk tier alone, as the tests of the disk tier want it. */
static rm_session *cached_session(const char *mdir, const char *cache, double gb, int chunk)
{
    return ram_session(mdir, cache, gb, -1, chunk);
}

/* One turn of a new session: system prompt sys (may be NULL), message q. */
static int fresh_turn(const char *mdir, const char *cache, double gb, const char *sys, const char *q, turn_rec *r)
{
    rm_session *s = cached_session(mdir, cache, gb, 0);
    if (!s) return -1;
    rm_gen_opts o = { .max_new = 6, .think = 1, .spec = RM_SPEC_OFF };
    int rc = (sys && rm_session_set_system(s, sys)) || run_turn(s, q, &o, r);
    rm_session_free(s);
    return rc;
}

static int count_entries(const char *dir, uint64_t *bytes)
{
    DIR *d = opendir(dir);
    int n = 0;
    if (bytes) *bytes = 0;
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (!strstr(e->d_name, ".snap") || strstr(e->d_name, ".tmp.")) continue;
        n++;
        char p[600];
        struct stat st;
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        if (bytes && !stat(p, &st)) *bytes += (uint64_t)st.st_size;
    }
    if (d) closedir(d);
    return n;
}

/* The entry of `tokens` tokens in dir (its path into out), or -1. */
static int entry_of(const char *dir, int tokens, char *out, size_t cap)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int found = -1;
    char want[32];
    snprintf(want, sizeof want, "-%d-", tokens);
    while (d && (e = readdir(d)))
        if (strstr(e->d_name, want) && !strstr(e->d_name, ".tmp.")) {
            snprintf(out, cap, "%s/%s", dir, e->d_name);
            found = 0;
        }
    if (d) closedir(d);
    return found;
}

static void check_prefix(const char *model)
{
    const char *mdir = test_model_dir(model);
    char cache[256];
    REQUIRE(mdir && scratch_dir(cache, sizeof cache, "prefix"));
    turn_rec a = { 0 }, b = { 0 }, ref = { 0 }, near = { 0 }, again = { 0 }, forged = { 0 }, ref3 = { 0 };
    /* the first conversation leaves its system prompt and its whole prompt */
    CHECK(fresh_turn(mdir, cache, 1, sys1, "When was the lamp first lit?", &a) == 0);
    CHECKF(a.prompt.restored == 0 && count_entries(cache, NULL) == 2, "%s: %d entries", model, count_entries(cache, NULL));
    /* another question after the same system prompt: restored, then as without the cache */
    CHECK(fresh_turn(mdir, cache, 1, sys1, "Who kept it in the winter of the great storm?", &b) == 0);
    CHECK(fresh_turn(mdir, cache, -1, sys1, "Who kept it in the winter of the great storm?", &ref) == 0);
    CHECKF(b.prompt.restored >= PREFIX_MIN_TOKENS && b.prompt.total == b.prompt.ctx - b.prompt.restored &&
               !b.prompt.reprefill,
           "%s: restored %d of %d, computed %d", model, b.prompt.restored, b.prompt.ctx, b.prompt.total);
    CHECKF(same_rows(&b, &ref), "%s: the turn after a restored prefix differs", model);
    CHECK(ref.prompt.restored == 0);
    /* one token different in the system prompt: nothing of it is restored */
    CHECK(fresh_turn(mdir, cache, 1, sys1_near, "Who kept it in the winter of the great storm?", &near) == 0);
    CHECKF(near.prompt.restored == 0, "%s: a near miss restored %d tokens", model, near.prompt.restored);
    /* the first prompt again: whole, with its logits */
    CHECK(fresh_turn(mdir, cache, 1, sys1, "When was the lamp first lit?", &again) == 0);
    CHECKF(again.prompt.restored == again.prompt.ctx && again.prompt.total == 0 && same_rows(&a, &again),
           "%s: the same prompt restored %d of %d", model, again.prompt.restored, again.prompt.ctx);
    /* an entry whose first id is not what its name says (its CRC made right) */
    char path[600];
    REQUIRE(entry_of(cache, b.prompt.restored, path, sizeof path) == 0);
    size_t n = 0;
    unsigned char *e = (unsigned char *)t_read_file(path, &n);
    REQUIRE(e && n > 140);
    e[128] ^= 1;
    uint32_t c = crc_update(0, e, n - 4);
    for (int i = 0; i < 4; i++) e[n - 4 + i] = (unsigned char)(c >> 8 * i);
    FILE *f = fopen(path, "wb");
    REQUIRE(f);
    CHECK(fwrite(e, 1, n, f) == n);
    fclose(f);
    free(e);
    CHECK(fresh_turn(mdir, cache, 1, sys1, "What colour is the tower?", &forged) == 0);
    CHECK(fresh_turn(mdir, cache, -1, sys1, "What colour is the tower?", &ref3) == 0);
    CHECKF(forged.prompt.restored == 0 && same_rows(&forged, &ref3), "%s: a forged entry gave %d tokens", model,
           forged.prompt.restored);
    /* it was removed, and the turn wrote a true one in its place */
    rm_session *s = cached_session(mdir, cache, 1, 0);
    REQUIRE(s);
    snap_data d;
    rm_err err;
    CHECKF(snap_read(s, path, NULL, 0, &d, &err) == 0, "%s", err.msg);
    snap_data_free(&d);
    rm_session_free(s);
    rec_free(&a); rec_free(&b); rec_free(&ref); rec_free(&near); rec_free(&again); rec_free(&forged); rec_free(&ref3);
    scratch_remove(cache);
}

/* Under ASan on k3-tiny, the same K3 layers as the embedded model at a
 * quarter of its weights: the embedded model there took 10.9 of the ASan
 * unit run's 111 CPU-seconds, for no path of its own. */
TEST(prefix_embedded_exact_prefixes_only) { check_prefix(T_ASAN ? "k3-tiny" : "embedded"); }
TEST(prefix_kl_exact_prefixes_only) { check_prefix("kl-tiny"); }

/* A prompt stopped in its fourth pass (of at most 16 tokens) leaves the
 * entry of its third pass boundary (the one of the second it replaced), and
 * the same prompt in a new session goes on from there. */
TEST(prefix_stopped_prompt_resumes_from_its_last_pass)
{
    const char *mdir = test_model_dir("embedded");
    char cache[256];
    REQUIRE(mdir && scratch_dir(cache, sizeof cache, "prefixpass"));
    const char *q = "Here is a long note to read before the question: the lamp was lit in the autumn, the keeper "
                    "wrote every night, the fog came in from the west and the bell rang until dawn. What happened?";
    rm_session *s = cached_session(mdir, cache, 1, 16);
    REQUIRE(s);
    turn_rec r = { .stop_at_pass = 3 }, go = { 0 }, ref = { 0 };
    rm_gen_opts o = { .max_new = 6, .think = 1, .spec = RM_SPEC_OFF };
    CHECK(run_turn(s, q, &o, &r) == 0 && rm_session_last_interrupted(s) == RM_STOPPED_PROMPT);
    rm_session_free(s);
    /* passes of equal size, at most 16: the entry is at the third boundary */
    const int size = (r.prompt.ctx + (r.prompt.ctx + 15) / 16 - 1) / ((r.prompt.ctx + 15) / 16);
    char path[600];
    CHECKF(count_entries(cache, NULL) == 1 && entry_of(cache, 3 * size, path, sizeof path) == 0, "%d entries",
           count_entries(cache, NULL));
    CHECK(fresh_turn(mdir, cache, 1, NULL, q, &go) == 0);
    CHECK(fresh_turn(mdir, cache, -1, NULL, q, &ref) == 0);
    CHECKF(go.prompt.restored == 3 * size && same_rows(&go, &ref), "restored %d", go.prompt.restored);
    rec_free(&r); rec_free(&go); rec_free(&ref);
    scratch_remove(cache);
}

/* In a cache of 4 MB (two entries of the embedded model), older
 * conversations' entries go first; the entry a session restored stays even
 * when it is the oldest (its time is set back while the prompt runs). */
typedef struct age_ctx { turn_rec rec; const char *path; int aged; } age_ctx;

static void age_entry(void *ud, const rm_token_stats *st)
{
    age_ctx *a = ud;
    if (st->kind == RM_REC_PROGRESS && !a->aged) {
        struct timespec old[2] = { { 946684800, 0 }, { 946684800, 0 } };    /* 2000-01-01 */
        CHECK(utimensat(AT_FDCWD, a->path, old, 0) == 0);
        a->aged = 1;
    }
    rec_stats(&a->rec, st);
}

TEST(prefix_cache_is_bounded_lru)
{
    const char *mdir = test_model_dir("embedded");
    char cache[256];
    REQUIRE(mdir && scratch_dir(cache, sizeof cache, "prefixlru"));
    const double gb = 0.004;
    const char *sys2 = "You are a patient tutor of arithmetic for children. Explain every step of a sum slowly, "
                       "with small numbers and friendly words, and check the answer at the end.";
    turn_rec r1 = { 0 }, r2 = { 0 };
    uint64_t bytes;
    char cap[600];
    CHECK(fresh_turn(mdir, cache, gb, sys1, "When was the lamp first lit?", &r1) == 0);
    CHECK(count_entries(cache, &bytes) == 2 && bytes <= 4000000);
    CHECK(fresh_turn(mdir, cache, gb, sys2, "What is seven and five?", &r2) == 0);
    CHECKF(count_entries(cache, &bytes) == 2 && bytes <= 4000000, "%d entries, %llu bytes", count_entries(cache, NULL),
           (unsigned long long)bytes);
    /* the first conversation's entries went first: the second's are left */
    CHECK(entry_of(cache, r1.prompt.ctx, cap, sizeof cap) == -1 && entry_of(cache, r2.prompt.ctx, cap, sizeof cap) == 0);
    /* restore sys2's capture and make it the oldest while the prompt runs */
    const rm_chat_msg m[1] = { { "system", sys2, NULL, NULL } };
    rm_session *s = cached_session(mdir, cache, gb, 0);
    REQUIRE(s);
    int32_t *ids = NULL;
    rm_err err;
    const rm_chat_opts co = { 1, NULL, 0, NULL };
    int ns = rm_chat_render(rm_session_tokenizer(s), rm_chat_detect(rm_session_tokenizer(s)), m, 1, &co, &ids, &err);
    free(ids);
    REQUIRE(ns > 0 && entry_of(cache, ns, cap, sizeof cap) == 0);
    age_ctx ac = { { 0 }, cap, 0 };
    volatile int stop = 0;
    ac.rec.stop = &stop;
    rm_gen_events ev = { &ac, NULL, age_entry };
    rm_gen_opts o = { .max_new = 6, .think = 1, .spec = RM_SPEC_OFF };
    CHECK(rm_session_set_system(s, sys2) == 0);
    CHECK(rm_session_turn(s, "And what is nine and four, please?", &o, &ev, &stop, &err) == 0);
    CHECKF(ac.aged && ac.rec.prompt.restored == ns, "restored %d of the system prompt's %d", ac.rec.prompt.restored, ns);
    CHECKF(access(cap, F_OK) == 0, "the entry in use was evicted");
    CHECK(count_entries(cache, &bytes) <= 2 && bytes <= 4000000);
    rm_session_free(s);
    rec_free(&r1); rec_free(&r2); rec_free(&ac.rec);
    scratch_remove(cache);
}

/* Off at 0 (the environment) or below (the option); a bad value is refused. */
TEST(prefix_cache_off_and_bad_sizes)
{
    const char *mdir = test_model_dir("kl-tiny");
    char cache[256];
    REQUIRE(mdir && scratch_dir(cache, sizeof cache, "prefixoff"));
    turn_rec r = { 0 };
    CHECK(fresh_turn(mdir, cache, -1, sys1, "When was the lamp first lit?", &r) == 0);
    CHECK(count_entries(cache, NULL) == 0);
    rec_free(&r);
    rm_open_opts oo = { .prefix_cache_dir = cache };     /* the size from REMORA_PREFIX_CACHE_GB */
    rm_session *s = NULL;
    rm_err err;
    setenv("REMORA_PREFIX_CACHE_GB", "lots", 1);
    CHECK(rm_session_open(mdir, &oo, &s, &err) == -1 && strstr(err.msg, "REMORA_PREFIX_CACHE_GB=lots"));
    setenv("REMORA_PREFIX_CACHE_GB", "-1", 1);
    CHECK(rm_session_open(mdir, &oo, &s, &err) == -1);
    setenv("REMORA_PREFIX_CACHE_GB", "0.5", 1);
    CHECK(rm_session_open(mdir, &oo, &s, &err) == 0 && s->prefix.limit == 500000000ull);
    rm_session_free(s);
    setenv("REMORA_PREFIX_CACHE_GB", "0", 1);
    s = NULL;
    CHECK(rm_session_open(mdir, &oo, &s, &err) == 0 && !s->prefix.dir[0]);
    rm_session_free(s);
    scratch_remove(cache);
}

/* ---- the RAM tier ---------------------------------------------------------- */

/* A new conversation in session s: system prompt sys, message q. */
static int next_conversation(rm_session *s, const char *sys, const char *q, turn_rec *r)
{
    rm_session_clear(s);
    rm_gen_opts o = { .max_new = 6, .think = 1, .spec = RM_SPEC_OFF };
    return rm_session_set_system(s, sys) || run_turn(s, q, &o, r);
}

static void check_ram(const char *model)
{
    const char *mdir = test_model_dir(model);
    char cache[256];
    REQUIRE(mdir && scratch_dir(cache, sizeof cache, "prefixram"));
    const char *q1 = "When was the lamp first lit?", *q2 = "Who kept it in the winter of the great storm?";
    turn_rec a = { 0 }, b = { 0 }, again = { 0 }, ref = { 0 }, disk = { 0 };
    rm_session *s = ram_session(mdir, cache, 1, 0.5, 0);
    REQUIRE(s);
    /* the first conversation's system prompt and prompt: in RAM, not on the disk */
    CHECK(next_conversation(s, sys1, q1, &a) == 0);
    CHECKF(s->prefix.nram == 2 && count_entries(cache, NULL) == 0 && s->prefix.ram_bytes <= s->prefix.ram_limit,
           "%s: %d in RAM, %d on the disk", model, s->prefix.nram, count_entries(cache, NULL));
    /* the next conversation restores the system prompt from RAM */
    CHECK(next_conversation(s, sys1, q2, &b) == 0);
    CHECK(fresh_turn(mdir, cache, -1, sys1, q2, &ref) == 0);
    CHECKF(b.prompt.restored >= PREFIX_MIN_TOKENS && b.prompt.restored_ram == b.prompt.restored &&
               b.prompt.total == b.prompt.ctx - b.prompt.restored && same_rows(&b, &ref),
           "%s: restored %d (%d from RAM) of %d", model, b.prompt.restored, b.prompt.restored_ram, b.prompt.ctx);
    /* the first prompt again: whole, from RAM, with its logits */
    CHECK(next_conversation(s, sys1, q1, &again) == 0);
    CHECKF(again.prompt.restored == again.prompt.ctx && again.prompt.restored_ram == again.prompt.ctx &&
               same_rows(&a, &again),
           "%s: the same prompt restored %d of %d from RAM", model, again.prompt.restored_ram, again.prompt.ctx);
    CHECK(s->prefix.ram_restores == 2 && count_entries(cache, NULL) == 0);
    /* closed: its entries are on the disk, and restored from there as from RAM */
    rm_session_free(s);
    CHECKF(count_entries(cache, NULL) == 3, "%s: %d entries on the disk", model, count_entries(cache, NULL));
    s = ram_session(mdir, cache, 1, 0.5, 0);
    REQUIRE(s);
    CHECK(next_conversation(s, sys1, q2, &disk) == 0);
    CHECKF(disk.prompt.restored == disk.prompt.ctx && disk.prompt.restored_ram == 0 && same_rows(&disk, &ref),
           "%s: restored %d from the disk (%d from RAM)", model, disk.prompt.restored, disk.prompt.restored_ram);
    rm_session_free(s);
    rec_free(&a); rec_free(&b); rec_free(&again); rec_free(&ref); rec_free(&disk);
    scratch_remove(cache);
}

TEST(prefix_ram_embedded_same_logits_as_disk) { check_ram(T_ASAN ? "k3-tiny" : "embedded"); }
TEST(prefix_ram_kl_same_logits_as_disk) { check_ram("kl-tiny"); }

/* A RAM tier of one entry's size: the session's memory stays within it,
 * the older entries go to the disk as the newer come, and a conversation
 * restores from whichever holds its beginning. */
TEST(prefix_ram_budget_evicts_to_disk)
{
    const char *mdir = test_model_dir("kl-tiny");
    char cache[256];
    REQUIRE(mdir && scratch_dir(cache, sizeof cache, "prefixramlru"));
    rm_session *s = ram_session(mdir, cache, 1, -1, 0);
    REQUIRE(s);
    const uint64_t one = snap_file_bytes(s, 80, SNAP_ROUTES | SNAP_LOGITS);
    rm_session_free(s);
    s = ram_session(mdir, cache, 1, one * 1.5 / 1e9, 0);
    REQUIRE(s);
    turn_rec a = { 0 }, b = { 0 }, c = { 0 }, ref = { 0 };
    const char *sys2 = "You are a patient tutor of arithmetic for children. Explain every step of a sum slowly, "
                       "with small numbers and friendly words, and check the answer at the end.";
    CHECK(next_conversation(s, sys1, "When was the lamp first lit?", &a) == 0);
    CHECK(next_conversation(s, sys2, "What is seven and five?", &b) == 0);
    /* four entries made, the newest in RAM, the others moved to the disk */
    CHECKF(s->prefix.nram >= 1 && s->prefix.ram_bytes <= s->prefix.ram_limit && s->prefix.ram_spills >= 2 &&
               count_entries(cache, NULL) == 4 - s->prefix.nram,
           "%d in RAM (%llu of %llu bytes), %d spilled, %d on the disk", s->prefix.nram,
           (unsigned long long)s->prefix.ram_bytes, (unsigned long long)s->prefix.ram_limit, s->prefix.ram_spills,
           count_entries(cache, NULL));
    /* sys1's conversation went to the disk: restored from there */
    CHECK(next_conversation(s, sys1, "Who kept it in the winter of the great storm?", &c) == 0);
    CHECK(fresh_turn(mdir, cache, -1, sys1, "Who kept it in the winter of the great storm?", &ref) == 0);
    CHECKF(c.prompt.restored >= PREFIX_MIN_TOKENS && c.prompt.restored_ram == 0 && same_rows(&c, &ref),
           "restored %d (%d from RAM)", c.prompt.restored, c.prompt.restored_ram);
    CHECK(s->prefix.ram_bytes <= s->prefix.ram_limit);
    rm_session_free(s);
    rec_free(&a); rec_free(&b); rec_free(&c); rec_free(&ref);
    scratch_remove(cache);
}

TEST(prefix_ram_bad_sizes)
{
    const char *mdir = test_model_dir("kl-tiny");
    char cache[256];
    REQUIRE(mdir && scratch_dir(cache, sizeof cache, "prefixramoff"));
    rm_open_opts oo = { .prefix_cache_dir = cache, .prefix_cache_gb = 1 };   /* the RAM tier from REMORA_PREFIX_RAM_GB */
    rm_session *s = NULL;
    rm_err err;
    setenv("REMORA_PREFIX_RAM_GB", "1GB", 1);
    CHECK(rm_session_open(mdir, &oo, &s, &err) == -1 && strstr(err.msg, "REMORA_PREFIX_RAM_GB=1GB"));
    setenv("REMORA_PREFIX_RAM_GB", "0.25", 1);
    CHECK(rm_session_open(mdir, &oo, &s, &err) == 0 && s->prefix.ram_limit == 250000000ull);
    rm_session_free(s);
    s = NULL;
    setenv("REMORA_PREFIX_RAM_GB", "0", 1);
    CHECK(rm_session_open(mdir, &oo, &s, &err) == 0 && s->prefix.ram_limit == 0);
    rm_session_free(s);
    unsetenv("REMORA_PREFIX_RAM_GB");
    /* the default: 1 GB at most, an eighth of the RAM budget at most */
    s = NULL;
    CHECK(rm_session_open(mdir, &oo, &s, &err) == 0 && s->prefix.ram_limit > 0 && s->prefix.ram_limit <= 1000000000ull &&
          s->prefix.ram_limit <= rm_model_get_info(s->m)->ram_budget / 8);
    rm_session_free(s);
    scratch_remove(cache);
}
