/* commands.h — the subcommands of the remora binary, one file each under
 * app/. Each takes the arguments after its name (argv[0] is the command name)
 * and returns the process exit status: 0 success, 1 runtime failure, 2 bad
 * input or usage, 130 interrupted. */
#ifndef REMORA_COMMANDS_H
#define REMORA_COMMANDS_H

typedef int cmd_fn(int argc, char **argv);
cmd_fn cmd_logits, cmd_run, cmd_serve, cmd_synth, cmd_eval, cmd_bench, cmd_forecast, cmd_bench_kernels, cmd_tokenize,
       cmd_bench_tokenizer, cmd_setup, cmd_fetch, cmd_chat, cmd_bench_ui;

#endif
