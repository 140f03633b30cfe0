/* conv.h — the conversation of a chat source that keeps its own (the
 * synthetic source and an endpoint; the engine's is rm_session's): the
 * system prompt, the messages with their reasoning and how each reply
 * ended, the view the chat reads (the system prompt first, as
 * rm_session_messages gives it, so /load brings /system back), and the
 * engine's transcript format for /save and /load, so every source reads
 * the others' files.
 */
#ifndef REMORA_UI_CONV_H
#define REMORA_UI_CONV_H

#include "engine.h"

typedef struct ui_conv_msg {
    char *role, *content;
    char *reasoning;            /* NULL: none */
    int   interrupted;          /* 0, RM_STOPPED_REPLY or RM_STOPPED_PROMPT */
} ui_conv_msg;

typedef struct ui_conv {
    char        *system;        /* NULL: none */
    ui_conv_msg *msgs;
    int          n, cap;
    rm_chat_msg *view;          /* ui_conv_view's, kept as large as the messages need */
    int          vcap;
} ui_conv;

/* Appends copies of the strings; -1 out of memory, the conversation as it
 * was. */
int  ui_conv_push(ui_conv *c, const char *role, const char *content, const char *reasoning, int interrupted);
/* Drops the last message, if any. */
void ui_conv_pop(ui_conv *c);
/* Drops every message; the system prompt stays (as with rm_session_clear). */
void ui_conv_clear(ui_conv *c);
/* text NULL or "": no system prompt. -1 out of memory, unchanged. */
int  ui_conv_set_system(ui_conv *c, const char *text);
/* The system prompt, then the messages; valid until the next change. */
int  ui_conv_view(ui_conv *c, const rm_chat_msg **out);
/* How the last reply ended (0 when the last message is not a reply). */
int  ui_conv_last_interrupted(const ui_conv *c);
int  ui_conv_save(const ui_conv *c, const char *path, rm_err *err);
/* Replaces the conversation, system prompt included, only when the whole
 * file was read; otherwise nothing changes and *err says why. */
int  ui_conv_load(ui_conv *c, const char *path, rm_err *err);
void ui_conv_free(ui_conv *c);

#endif
