/* test_setup.c — remote/setup.c without a server: the default source URL
 * and how $REMORA_HF_HOST and $REMORA_HF_PATH change it. Setting a model up
 * is tested against nginx in tests/sh/http_nginx.sh and http_resume.sh. */
#include <stdlib.h>
#include <string.h>
#include "tests/unit/test.h"
#include "engine.h"

TEST(setup_default_source)
{
    char buf[1024];
    unsetenv("REMORA_HF_HOST");
    unsetenv("REMORA_HF_PATH");
    rm_default_source(buf, sizeof buf);
    CHECK(!strcmp(buf, "https://huggingface.co/moonshotai/Kimi-K3/resolve/main"));
    setenv("REMORA_HF_HOST", "hf-mirror.example", 1);
    rm_default_source(buf, sizeof buf);
    CHECK(!strcmp(buf, "https://hf-mirror.example/moonshotai/Kimi-K3/resolve/main"));
    setenv("REMORA_HF_HOST", "http://127.0.0.1:8080/", 1);
    setenv("REMORA_HF_PATH", "/m/k3", 1);
    rm_default_source(buf, sizeof buf);
    CHECK(!strcmp(buf, "http://127.0.0.1:8080/m/k3"));
    unsetenv("REMORA_HF_HOST");
    unsetenv("REMORA_HF_PATH");
}
