/* session.c — a conversation over one model: chat rendering, prefill, the
 * decode loop, sampling and the reasoning/answer split. (Being written: the
 * functions below report that generation is not available yet.) */
#include <stdlib.h>
#include "engine.h"

struct rm_session { int unused; };

int rm_session_open(const char *model_dir, const rm_open_opts *o, rm_session **out, rm_err *err)
{ (void)o; *out = NULL; return rm_errf(err, "%s: generation is not implemented yet", model_dir); }
void rm_session_free(rm_session *s) { free(s); }
rm_model *rm_session_model(rm_session *s) { return NULL; }
const rm_tokenizer *rm_session_tokenizer(rm_session *s) { return NULL; }
int rm_session_set_system(rm_session *s, const char *t) { return -1; }
void rm_session_clear(rm_session *s) {}
int rm_session_turn(rm_session *s, const char *u, const rm_gen_opts *o, const rm_gen_events *ev,
                    volatile int *stop, rm_err *err) { return rm_errf(err, "not implemented"); }
int rm_session_messages(const rm_session *s, const rm_chat_msg **m) { *m = NULL; return 0; }
int rm_session_last_interrupted(const rm_session *s) { return 0; }
int rm_session_save(const rm_session *s, const char *p, rm_err *err) { return rm_errf(err, "not implemented"); }
int rm_session_load(rm_session *s, const char *p, rm_err *err) { return rm_errf(err, "not implemented"); }
