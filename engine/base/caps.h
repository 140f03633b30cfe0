/* caps.h — the one size cap of each small file of a model directory,
 * enforced where the file is read from disk and where `remora setup`
 * downloads it, so that a file setup accepted always opens, and a file the
 * model would refuse is never downloaded. Documented in man/remora.1
 * (FILES). A larger file is refused as bad input naming the file and the
 * cap; the caps are far above what the real checkpoints hold (K3's index,
 * the largest, is a few MB per thousand tensors). */
#ifndef REMORA_CAPS_H
#define REMORA_CAPS_H

#define CAP_CONFIG      (16u << 20)     /* config.json, generation_config.json */
#define CAP_TOKENIZER   (64u << 20)     /* tiktoken.model, tokenizer_config.json */
#define CAP_INDEX       (256u << 20)    /* model.safetensors.index.json */
#define CAP_META        (64u << 20)     /* .remora/source.json, .remora/manifest.json */
/* shards an index may name: each is an open file while the model runs */
#define CAP_SHARDS      8192

#endif
