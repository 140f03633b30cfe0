/* test_serve.c — the parts of remora serve that judge a request before any
 * model is involved (app/serve/http.c, openai.c): the key's comparison,
 * loopback origins, and OpenAI request bodies refused with the field named
 * (a bad body is 400 whatever the model's state; a good one is 503 while
 * the model loads); model lists and finish reasons. The server itself is
 * tested over HTTP in tests/sh/serve_*.sh. */
#include <string.h>
#include "tests/unit/test.h"
#include "app/serve/serve.h"

TEST(serve_key_and_origin_checks)
{
    const char key[] = "sk-test";
    CHECK(serve_key_matches("Bearer sk-test", key, sizeof key - 1));
    CHECK(serve_key_matches("bearer   sk-test", key, sizeof key - 1));
    CHECK(!serve_key_matches("Bearer sk-tes", key, sizeof key - 1));
    CHECK(!serve_key_matches("Bearer sk-test2", key, sizeof key - 1));
    CHECK(!serve_key_matches("Basic sk-test", key, sizeof key - 1) && !serve_key_matches(NULL, key, sizeof key - 1));
    CHECK(serve_origin_is_loopback("http://localhost:8080") && serve_origin_is_loopback("https://127.0.0.1"));
    CHECK(serve_origin_is_loopback("http://app.localhost"));
    CHECK(!serve_origin_is_loopback("http://example.org") && !serve_origin_is_loopback("http://localhost/x"));
    CHECK(!serve_origin_is_loopback("file://localhost") && !serve_origin_is_loopback("null"));
}

TEST(serve_openai_requests_refused_by_field)
{
    serve_cfg cfg = { .served_name = "tiny", .max_tokens = 64, .gen = { .think = 1 } };
    serve_req r;
    serve_error e;
    const char *bad[][2] = {
        { "{", NULL },
        { "[]", NULL },
        { "{\"messages\": []}", "messages" },
        { "{\"messages\": [{\"role\": \"user\", \"content\": \"hi\"}], \"model\": 3}", "model" },
        { "{\"messages\": [{\"role\": \"user\", \"content\": \"hi\"}], \"n\": 2}", "n" },
        { "{\"messages\": [{\"role\": \"user\", \"content\": \"hi\"}], \"max_tokens\": 0}", "max_tokens" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        memset(&e, 0, sizeof e);
        CHECKF(oa_parse_chat(&cfg, NULL, bad[i][0], strlen(bad[i][0]), &r, &e) == -1 && e.status == 400 &&
               (!bad[i][1] || !strcmp(e.param, bad[i][1])), "%s: %d %s (%s)", bad[i][0], e.status, e.param,
               e.message);
    }
    const char *other = "{\"model\": \"big\", \"messages\": [{\"role\": \"user\", \"content\": \"hi\"}]}";
    CHECK(oa_parse_chat(&cfg, NULL, other, strlen(other), &r, &e) == -1 && e.status == 404);
    const char *ok = "{\"messages\": [{\"role\": \"user\", \"content\": \"hi\"}]}";
    CHECK(oa_parse_chat(&cfg, NULL, ok, strlen(ok), &r, &e) == -1 && e.status == 503);
    const char *comp = "{\"prompt\": \"hi\", \"echo\": true}";
    CHECK(oa_parse_completion(&cfg, NULL, comp, strlen(comp), &r, &e) == -1 && e.status == 400 &&
          !strcmp(e.param, "echo"));
}

TEST(serve_openai_models_and_finish)
{
    serve_cfg cfg = { .served_name = "tiny" };
    rm_buf out = { 0 };
    serve_error e;
    CHECK(oa_models(&cfg, NULL, NULL, &out, &e) == 0 && strstr(out.p, "\"object\":\"list\"") && strstr(out.p, "\"tiny\""));
    rm_buf_reset(&out);
    CHECK(oa_models(&cfg, NULL, "tiny", &out, &e) == 0 && strstr(out.p, "\"owned_by\":\"remora\""));
    CHECK(oa_models(&cfg, NULL, "other", &out, &e) == -1 && e.status == 404);
    CHECK(!strcmp(serve_openai.finish_name(SERVE_FIN_LENGTH), "length") &&
          !strcmp(serve_openai.finish_name(SERVE_FIN_TOOLS), "tool_calls") &&
          !strcmp(serve_openai.finish_name(SERVE_FIN_BAD_TOOL), "malformed_tool_call") &&
          !strcmp(serve_anthropic.finish_name(SERVE_FIN_LENGTH), "max_tokens"));
    rm_buf_free(&out);
}
