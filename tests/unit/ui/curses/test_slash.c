/* test_slash.c — ui/curses/slash.c's command records: one per command, each
 * with a help line and a handler, no name (or alias) twice whatever the
 * case, and "/name args" fitting the help page's column buffer. The
 * commands themselves are driven through tmux in tests/sh/tui_commands.sh. */
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include "tests/unit/test.h"
#include "ui/curses/tui.h"
#include "ui/curses/slash.h"

TEST(slash_one_record_per_command)
{
    CHECK(ui_ncommands >= 10);
    for (int i = 0; i < ui_ncommands; i++) {
        const ui_command *c = &ui_commands[i];
        CHECKF(c->name && c->name[0] != '/' && c->what && c->what[0] && c->run, "record %d", i);
        char shown[40];
        int n = snprintf(shown, sizeof shown, "/%s%s%s", c->name, c->args ? " " : "", c->args ? c->args : "");
        CHECKF(n > 0 && (size_t)n < sizeof shown, "/%s", c->name);
        for (int j = 0; j < i; j++) {
            const ui_command *d = &ui_commands[j];
            CHECKF(strcasecmp(c->name, d->name) && (!c->alias || strcasecmp(c->alias, d->name)) &&
                   (!d->alias || strcasecmp(c->name, d->alias)), "/%s twice", c->name);
        }
    }
}
