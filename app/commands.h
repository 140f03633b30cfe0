/* commands.h — the subcommands of the remora binary, one file each under
 * app/. Each takes the arguments after its name (argv[0] is the command name)
 * and returns the process exit status: 0 success, 1 runtime failure, 2 bad
 * input or usage, 130 interrupted. */
#ifndef REMORA_COMMANDS_H
#define REMORA_COMMANDS_H

int cmd_logits(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_serve(int argc, char **argv);
int cmd_synth(int argc, char **argv);
int cmd_eval(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_forecast(int argc, char **argv);
int cmd_bench_kernels(int argc, char **argv);
int cmd_tokenize(int argc, char **argv);
int cmd_bench_tokenizer(int argc, char **argv);
int cmd_setup(int argc, char **argv);
int cmd_fetch(int argc, char **argv);
int cmd_chat(int argc, char **argv);
int cmd_bench_ui(int argc, char **argv);

#endif
