/* test_manifest.c — remote/manifest.c: spans merge when they touch or
 * bridge, coverage and gaps are exact, a span past the shard's end is
 * refused, the file round-trips, a new shard size drops the spans, and a
 * damaged manifest is refused with its path. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "tests/unit/test.h"
#include "tests/unit/engine/helpers.h"
#include "remote/manifest.h"

TEST(manifest_spans_gaps_and_file)
{
    char tdir[256];
    REQUIRE(scratch_dir(tdir, sizeof tdir, "manifest"));
    char path[400];
    snprintf(path, sizeof path, "%s/manifest.json", tdir);
    manifest m;
    rm_err err = { "" };
    REQUIRE(!manifest_load(&m, path, &err));      /* missing: empty */
    int s = manifest_shard(&m, "a.safetensors", 1000);
    REQUIRE(s == 0);
    CHECK(!manifest_add(&m, s, 100, 200, &err));
    CHECK(!manifest_add(&m, s, 300, 400, &err));
    CHECK(!manifest_add(&m, s, 200, 300, &err));   /* bridges the two */
    CHECK(m.shards[s].n == 1 && m.shards[s].spans[0].lo == 100 && m.shards[s].spans[0].hi == 400);
    CHECK(!manifest_add(&m, s, 0, 50, &err));
    CHECK(!manifest_add(&m, s, 900, 1000, &err));
    CHECK(manifest_add(&m, s, 900, 1001, &err) && strstr(err.msg, "past the end"));
    CHECK(m.shards[s].n == 3);
    CHECK(manifest_covers(&m, s, 100, 400) && manifest_covers(&m, s, 150, 160) && manifest_covers(&m, s, 0, 50));
    CHECK(!manifest_covers(&m, s, 40, 60) && !manifest_covers(&m, s, 50, 100) && !manifest_covers(&m, 7, 0, 1));
    CHECK(manifest_bytes(&m, s) == 50 + 300 + 100);
    mf_span *g = NULL;
    int ng = 0, cap = 0;
    CHECK(!manifest_gaps(&m, s, 0, 1000, &g, &ng, &cap));
    CHECK(ng == 2 && g[0].lo == 50 && g[0].hi == 100 && g[1].lo == 400 && g[1].hi == 900);
    ng = 0;
    CHECK(!manifest_gaps(&m, s, 120, 450, &g, &ng, &cap) && ng == 1 && g[0].lo == 400 && g[0].hi == 450);
    free(g);
    CHECK(!manifest_save(&m, &err));
    manifest m2;
    REQUIRE(!manifest_load(&m2, path, &err));
    CHECK(m2.nshards == 1 && m2.shards[0].size == 1000 && m2.shards[0].n == 3 && manifest_covers(&m2, 0, 200, 300));
    CHECK(manifest_shard(&m2, "a.safetensors", 2000) == 0 && m2.shards[0].n == 0);   /* new size: spans dropped */
    manifest_free(&m2);
    manifest_free(&m);
    /* a damaged manifest is refused with its path */
    FILE *f = fopen(path, "w");
    if (f) { fputs("{\"shards\": {\"a\": {\"size\": 10, \"spans\": [[5, 2]]}}}", f); fclose(f); }
    CHECK(manifest_load(&m, path, &err) && strstr(err.msg, "manifest.json"));
    scratch_remove(tdir);
}
