/* model_path.h — where `remora chat` and `remora run` find a model when
 * --model is not given: ./assets/model (the source tree), then the model
 * `make install` put beside the binary, found from the binary's own
 * location (BIN/../share/remora/model, so a staged or moved installation
 * finds its own), then the one under the PREFIX the binary was built for
 * (PREFIX/share/remora/model). */
#ifndef REMORA_APP_MODEL_PATH_H
#define REMORA_APP_MODEL_PATH_H

#include <stddef.h>

/* Writes the first of those folders that holds a config.json to out and
 * returns 0; otherwise returns -1 and writes the message to print (which
 * says where it looked, and --model DIR or --synthetic) to out. */
int model_path_default(const char *cmd, char *out, size_t n);

#endif
