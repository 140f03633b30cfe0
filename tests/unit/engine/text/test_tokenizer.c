/* test_tokenizer.c — text/tokenizer.c (with pretok.c) against tiktoken's
 * goldens (every case of fixtures/tokenizer/encode_goldens.json, with
 * special strings as text and as specials), decoding round trips, and the
 * reader's error messages for damaged tiktoken.model and
 * tokenizer_config.json files. Also: invalid UTF-8 and a 10 MB input encode
 * without trouble. */
#include <string.h>
#include <jansson.h>
#include "tests/unit/test.h"
#include "engine.h"
#include "tests/unit/engine/helpers.h"

static json_t *load_json(const char *rel)
{
    const char *p = fixture_path(rel);
    if (!p) return NULL;
    json_error_t je;
    json_t *j = json_load_file(p, JSON_ALLOW_NUL, &je);
    if (!j) fprintf(stderr, "    %s: %s\n", p, je.text);
    return j;
}

/* Concatenated bytes of ids; malloc'd. */
static char *decode_all(const rm_tokenizer *t, const int32_t *ids, int n, size_t *len)
{
    size_t cap = 64, o = 0;
    char *buf = malloc(cap);
    for (int i = 0; i < n && buf; i++) {
        size_t l;
        const char *b = rm_tokenizer_token_bytes(t, ids[i], &l);
        if (!b) { free(buf); return NULL; }
        while (o + l + 1 > cap) buf = realloc(buf, cap *= 2);
        memcpy(buf + o, b, l);
        o += l;
    }
    *len = o;
    return buf;
}

TEST(tokenizer_open_fixture)
{
    rm_tokenizer *t = fixture_tokenizer();
    REQUIRE(t);
    CHECK(rm_tokenizer_vocab(t) == 3072);
    CHECK(tokenizer_ranks(t) == 2816);
    CHECK(rm_tokenizer_special_id(t, "[BOS]") == 2816);
    CHECK(rm_tokenizer_special_id(t, "<|end_of_msg|>") == 2818);
    CHECK(rm_tokenizer_special_id(t, "<|open|>") == 2819);
    CHECK(rm_tokenizer_special_id(t, "[PAD]") == 3071);
    CHECK(rm_tokenizer_special_id(t, "<|reserved_token_2824|>") == 2824);
    CHECK(rm_tokenizer_special_id(t, "<|reserved_token_3073|>") == 3073);
    CHECK(rm_tokenizer_special_id(t, "<|im_end|>") == -1);
    size_t l;
    const char *b = rm_tokenizer_token_bytes(t, 2821, &l);
    CHECK(b && l == 7 && !memcmp(b, "<|sep|>", 7));
    b = rm_tokenizer_token_bytes(t, 65, &l);
    CHECK(b && l == 1 && b[0] == 'A');
    CHECK(rm_tokenizer_token_bytes(t, -1, &l) == NULL);
    CHECK(rm_tokenizer_token_bytes(t, 3074, &l) == NULL);
    rm_tokenizer_free(t);
}

static void check_goldens(int force_heap)
{
    rm_tokenizer *t = fixture_tokenizer();
    json_t *g = load_json("tokenizer/encode_goldens.json");
    REQUIRE(t && g);
    json_t *cases = json_object_get(g, "cases");
    REQUIRE(json_array_size(cases) == 254);
    tokenizer_force_heap(t, force_heap);
    size_t i;
    json_t *c;
    int bad = 0;
    json_array_foreach(cases, i, c) {
        json_t *text = json_object_get(c, "text");
        const char *s = json_string_value(text);
        size_t len = json_string_length(text);
        for (int allow = 0; allow < 2; allow++) {
            int32_t *ids = NULL;
            rm_err err;
            int n = rm_tokenizer_encode(t, s, len, allow, &ids, &err);
            json_t *want = json_object_get(c, allow ? "ids_allow_special" : "ids");
            if (n < 0 || !ids_equal(ids, n, want)) {
                if (bad++ < 10) {
                    fprintf(stderr, "    case %zu (allow_special=%d) %.60s: got", i, allow, s);
                    for (int k = 0; k < n && k < 40; k++) fprintf(stderr, " %d", ids[k]);
                    fprintf(stderr, "\n");
                }
                CHECK(0);
            }
            if (n >= 0 && !allow) {             /* ids decode to the exact input */
                size_t dl;
                char *d = decode_all(t, ids, n, &dl);
                CHECK(d && dl == len && !memcmp(d, s, len));
                free(d);
            }
            free(ids);
        }
    }
    json_decref(g);
    rm_tokenizer_free(t);
}

TEST(tokenizer_encode_goldens) { check_goldens(0); }

/* The heap merge (used for long pieces) picks the same pairs as tiktoken's
 * linear scan: all goldens again with every piece merged through the heap. */
TEST(tokenizer_encode_goldens_heap_merge) { check_goldens(1); }

TEST(tokenizer_special_strings_are_text_unless_allowed)
{
    rm_tokenizer *t = fixture_tokenizer();
    REQUIRE(t);
    const char *s = "x<|open|>y";
    int32_t *ids;
    int n = rm_tokenizer_encode(t, s, strlen(s), 0, &ids, NULL);
    REQUIRE(n > 3);
    for (int i = 0; i < n; i++) CHECK(ids[i] < 2816);
    free(ids);
    n = rm_tokenizer_encode(t, s, strlen(s), 1, &ids, NULL);
    REQUIRE(n == 3);
    CHECK(ids[1] == 2819);
    free(ids);
    n = rm_tokenizer_encode(t, "", 0, 1, &ids, NULL);
    CHECK(n == 0 && ids);
    free(ids);
    rm_tokenizer_free(t);
}

/* Invalid bytes are characters of their own: the ids still decode to the
 * input, and every byte survives. */
TEST(tokenizer_invalid_utf8_round_trips)
{
    rm_tokenizer *t = fixture_tokenizer();
    REQUIRE(t);
    const char cases[][16] = { "\xff", "a\x80" "b", "\xe4\xbd", "\xed\xa0\x80x", "\xc0\xaf ok",
                               "\xf4\x90\x80\x80", "ab\xe4\xbd\xa0", " \xfe\n\n" };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        size_t len = strlen(cases[k]), dl;
        int32_t *ids;
        int n = rm_tokenizer_encode(t, cases[k], len, 0, &ids, NULL);
        REQUIRE(n > 0);
        char *d = decode_all(t, ids, n, &dl);
        CHECK(d && dl == len && !memcmp(d, cases[k], len));
        free(d);
        free(ids);
    }
    rm_tokenizer_free(t);
}

/* A 10 MB input: mixed text, then single runs that are one pre-token piece
 * each (the heap merge path), all round-tripping. */
TEST(tokenizer_ten_megabytes)
{
    rm_tokenizer *t = fixture_tokenizer();
    REQUIRE(t);
    /* under ASan 2 MB: the same pieces through the same paths, where the
     * 10 MB took 5.7 of the ASan unit run's 111 CPU-seconds */
    size_t len = (T_ASAN ? 2u : 10u) << 20;
    char *s = malloc(len);
    REQUIRE(s);
    static const char *parts[] = { "Hello, world! ", "中文文本", "Привет ", "123456 ",
                                   "\n\n", "   ", "\xff\xfe", "😀👍🏽", "it's " };
    for (int mode = 0; mode < 3; mode++) {
        size_t o = 0;
        for (unsigned k = 0; o < len; k++) {
            const char *p = mode == 0 ? parts[(k * 7 + k / 3) % 9] : mode == 1 ? "a" : "中";
            size_t pl = strlen(p);
            if (o + pl > len) pl = len - o;
            memcpy(s + o, p, pl);
            o += pl;
        }
        int32_t *ids;
        int n = rm_tokenizer_encode(t, s, len, mode == 0, &ids, NULL);
        REQUIRE(n > 0);
        if (mode) {
            size_t dl;
            char *d = decode_all(t, ids, n, &dl);
            CHECK(d && dl == len && !memcmp(d, s, len));
            free(d);
        }
        free(ids);
    }
    free(s);
    rm_tokenizer_free(t);
}

/* ---- damaged files ---- */

static int load_err(const char *model, const char *cfg, rm_err *err)
{
    rm_tokenizer *t = NULL;
    int rc = tokenizer_load("tiktoken.model", model, strlen(model), "tokenizer_config.json",
                               cfg, cfg ? strlen(cfg) : 0, &t, err);
    rm_tokenizer_free(t);
    return rc;
}

/* A valid 256-byte rank file with one line replaced (or appended). */
static char *rank_file(int bad_line, const char *replacement)
{
    static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    char *s = malloc(256 * 32 + 4096);
    size_t o = 0;
    for (int r = 0; r < 256; r++) {
        if (r == bad_line) { o += (size_t)sprintf(s + o, "%s\n", replacement); continue; }
        o += (size_t)sprintf(s + o, "%c%c== %d\n", b64[r >> 2], b64[(r & 3) << 4], r);
    }
    if (bad_line >= 256) o += (size_t)sprintf(s + o, "%s\n", replacement);
    s[o] = 0;
    return s;
}

TEST(tokenizer_rejects_damaged_files)
{
    rm_err err;
    char *ok = rank_file(-1, "");
    CHECK(load_err(ok, NULL, &err) == 0);
    CHECK(load_err(ok, "{\"added_tokens_decoder\": {\"256\": {\"content\": \"<s>\"}}}", &err) == 0);
    free(ok);

    struct { int line; const char *text, *want; } cases[] = {
        { 5, "QQ=! 5", "line 6: bad base64" },
        { 7, "QQ==", "line 8: expected \"base64 rank\", found no rank" },
        { 9, "CQ== 10", "line 10: rank 10 where 9 was expected" },
        { 256, "YWI= 255", "line 257: rank 255 where 256 was expected" },
        { 256, "AA== 256", "line 257: rank 256 has the same bytes as rank 0" },
        { 3, "Aw== 3x", "line 4: bad rank" },
        { 40, "KA== 99999999999999999999", "line 41: bad rank" },
        { 65, "YWI= 65", "no rank for the single byte 0x41" },
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        char *f = rank_file(cases[k].line, cases[k].text);
        err.msg[0] = 0;
        CHECK(load_err(f, NULL, &err) == -1);
        CHECKF(strstr(err.msg, cases[k].want) && strstr(err.msg, "tiktoken.model"),
               "got \"%s\", want \"%s\"", err.msg, cases[k].want);
        free(f);
    }
    char *huge = malloc(10000);
    memset(huge, 'A', 9996);
    strcpy(huge + 9996, " 12");
    char *f = rank_file(12, huge);
    CHECK(load_err(f, NULL, &err) == -1);
    CHECKF(strstr(err.msg, "line 13: line is longer than"), "got \"%s\"", err.msg);
    free(huge);
    free(f);
    CHECK(load_err("", NULL, &err) == -1 && strstr(err.msg, "no ranks"));

    ok = rank_file(-1, "");
    struct { const char *cfg, *want; } cfgs[] = {
        { "{\"added_tokens_decoder\": {\"256\": ", "tokenizer_config.json line 1 column" },
        { "[1]", "not a JSON object" },
        { "{\"added_tokens_decoder\": {\"12\": {\"content\": \"x\"}}}", "\"12\" is not a special id" },
        { "{\"added_tokens_decoder\": {\"256\": {\"content\": 5}}}", "no usable \"content\"" },
        { "{\"added_tokens_decoder\": {\"256\": {\"content\": \"<a>\"}, \"257\": {\"content\": \"<a>\"}}}",
          "is named twice" },
    };
    for (size_t k = 0; k < sizeof cfgs / sizeof cfgs[0]; k++) {
        err.msg[0] = 0;
        CHECK(load_err(ok, cfgs[k].cfg, &err) == -1);
        CHECKF(strstr(err.msg, cfgs[k].want), "got \"%s\", want \"%s\"", err.msg, cfgs[k].want);
    }
    free(ok);

    rm_tokenizer *t;
    CHECK(rm_tokenizer_open("/nonexistent-dir", &t, &err) == -1 &&
          strstr(err.msg, "/nonexistent-dir/tiktoken.model"));
}
