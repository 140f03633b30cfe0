/* test_transcript.c — session/transcript.c: rm_transcript_save/load round
 * trip every field (system prompt, reasoning, the interrupted mark, text
 * beyond ASCII, a system message after the first turn), the file is plain
 * ASCII, a bad line fails the whole load by file and line, and a session
 * whose load fails keeps the conversation it had. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "tests/unit/test.h"
#include "engine.h"
#include "session/session.h"

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (f) { fputs(text, f); fclose(f); }
}

TEST(transcript_round_trip)
{
    char path[] = "/tmp/remora-tr-XXXXXX";
    int fd = mkstemp(path);
    REQUIRE(fd >= 0);
    close(fd);
    const rm_chat_msg msgs[4] = {
        { "user", "grüß dich — 你好", NULL, NULL },
        { "assistant", "partial", "thinking \"hard\"\n", NULL },
        { "system", "later instructions", NULL, NULL },
        { "user", "", NULL, NULL },
    };
    const int interrupted[4] = { 0, 1, 0, 0 };
    rm_err err = { "" };
    REQUIRE(rm_transcript_save(path, msgs, interrupted, 4, "be brief", &err) == 0);
    size_t len = 0;
    char *text = t_read_file(path, &len);
    REQUIRE(text);
    int ascii = 1;
    for (size_t i = 0; i < len; i++) ascii &= (unsigned char)text[i] < 0x80;
    CHECK(ascii && !strncmp(text, "{\"role\":\"system\",\"content\":\"be brief\"}\n", 39));
    free(text);
    rm_transcript t;
    REQUIRE(rm_transcript_load(path, &t, &err) == 0);
    CHECK(t.system && !strcmp(t.system, "be brief"));
    REQUIRE(t.n == 4);
    for (int i = 0; i < 4; i++) {
        CHECK(!strcmp(t.msgs[i].role, msgs[i].role) && !strcmp(t.msgs[i].content, msgs[i].content));
        CHECK(!t.msgs[i].reasoning_content == !msgs[i].reasoning_content);
        CHECK(t.interrupted[i] == interrupted[i]);
    }
    CHECK(!strcmp(t.msgs[1].reasoning_content, "thinking \"hard\"\n"));
    rm_transcript_free(&t);
    CHECK(t.n == 0 && !t.msgs && !t.system);
    /* no system prompt, no interrupted array */
    REQUIRE(rm_transcript_save(path, msgs, NULL, 1, NULL, &err) == 0);
    REQUIRE(rm_transcript_load(path, &t, &err) == 0);
    CHECK(!t.system && t.n == 1 && !t.interrupted[0]);
    rm_transcript_free(&t);
    unlink(path);
}

TEST(transcript_bad_line_fails_the_whole_load)
{
    char path[] = "/tmp/remora-tr-XXXXXX";
    int fd = mkstemp(path);
    REQUIRE(fd >= 0);
    close(fd);
    rm_transcript t;
    rm_err err = { "" };
    const char *bad[][2] = {
        { "{\"role\":\"user\",\"content\":\"hi\"}\n\n{\"role\":\"wizard\",\"content\":\"x\"}\n", ":3: \"role\"" },
        { "{\"role\":\"user\",\"content\":\"hi\"}\n{\"role\":\"user\"\n", ":2: not valid JSON" },
        { "{\"role\":\"user\",\"content\":7}\n", ":1: \"content\"" },
        { "{\"role\":\"assistant\",\"content\":\"a\",\"reasoning_content\":[]}\n", ":1: \"reasoning_content\"" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        write_text(path, bad[i][0]);
        CHECKF(rm_transcript_load(path, &t, &err) == -1 && strstr(err.msg, path) && strstr(err.msg, bad[i][1]),
               "case %zu: %s", i, err.msg);
        CHECK(t.n == 0 && !t.msgs && !t.system);
    }
    unlink(path);
    CHECK(rm_transcript_load(path, &t, &err) == -1 && strstr(err.msg, "cannot open"));
}

TEST(transcript_failed_load_keeps_the_session)
{
    const char *dir = fixture_path("k3-tiny");
    REQUIRE(dir);
    char good[] = "/tmp/remora-tr-XXXXXX", bad[] = "/tmp/remora-tr-XXXXXX";
    int a = mkstemp(good), b = mkstemp(bad);
    REQUIRE(a >= 0 && b >= 0);
    close(a);
    close(b);
    write_text(good, "{\"role\":\"system\",\"content\":\"sys\"}\n{\"role\":\"user\",\"content\":\"one\"}\n"
                     "{\"role\":\"assistant\",\"content\":\"two\",\"interrupted\":true}\n");
    write_text(bad, "{\"role\":\"user\",\"content\":\"x\"}\n{\"role\":\"nobody\",\"content\":\"y\"}\n");
    rm_session *s = NULL;
    rm_err err = { "" };
    REQUIRE(rm_session_open(dir, NULL, &s, &err) == 0);
    CHECK(rm_session_load(s, good, &err) == 0);
    CHECK(rm_session_last_interrupted(s));
    CHECK(rm_session_load(s, bad, &err) == -1 && strstr(err.msg, ":2:"));
    const rm_chat_msg *m;
    int n = rm_session_messages(s, &m);
    CHECKF(n == 3 && !strcmp(m[0].content, "sys") && !strcmp(m[1].content, "one") && !strcmp(m[2].content, "two"),
           "%d messages after the failed load", n);
    CHECK(rm_session_last_interrupted(s));
    rm_session_free(s);
    unlink(good);
    unlink(bad);
}

/* CRLF line ends and blank CRLF lines load; invalid UTF-8 is stored as
 * U+FFFD instead of failing the save (the turn would be lost). */
TEST(transcript_crlf_and_invalid_utf8)
{
    const char *text = "{\"role\":\"user\",\"content\":\"hi\"}\r\n\r\n \r\n{\"role\":\"assistant\",\"content\":\"yo\"}\r\n";
    rm_transcript t;
    rm_err err = { "" };
    REQUIRE(rm_transcript_parse(text, strlen(text), "t.jsonl", &t, &err) == 0);
    CHECK(t.n == 2 && !strcmp(t.msgs[1].content, "yo"));
    rm_transcript_free(&t);
    char path[] = "/tmp/remora-tr-XXXXXX";
    int fd = mkstemp(path);
    REQUIRE(fd >= 0);
    close(fd);
    rm_chat_msg m[2] = { { "user", "caf\xe9 \xff!", NULL, NULL }, { "assistant", "ok", "r\xc3", NULL } };
    CHECKF(rm_transcript_save(path, m, NULL, 2, NULL, &err) == 0, "%s", err.msg);
    REQUIRE(rm_transcript_load(path, &t, &err) == 0);
    CHECK(t.n == 2 && !strcmp(t.msgs[0].content, "caf\xef\xbf\xbd \xef\xbf\xbd!") &&
          !strcmp(t.msgs[1].reasoning_content, "r\xef\xbf\xbd"));
    rm_transcript_free(&t);
    unlink(path);
}
