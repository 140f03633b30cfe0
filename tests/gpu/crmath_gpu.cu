/* crmath_gpu.cu — the GPU half of the proof for engine/kernels/crmath.h:
 * every one of the 2^32 float inputs of crm_expf, crm_tanhf, crm_log1pf
 * and crm_sigmoidf evaluated on the device and on the host with the same
 * header, the results compared bit for bit (NaN = NaN), and the checksum
 * of tests/tools/crmath_sum.h printed for both and compared with the CPU
 * build's (CPU_SUM below: `make crmath-check`, which proves that build
 * correctly rounded against MPFR, prints them; `crmath-check --sum` in
 * seconds). Equal checksums tie the GPU to the CPU build, not only to
 * nvcc's host compiler.
 *
 * Build and run on the GPU machine, from the repository root:
 *
 *   nvcc -O2 -arch=sm_90 --fmad=false -Xcompiler -ffp-contract=off,-fopenmp \
 *        -Iengine -Itests/tools tests/gpu/crmath_gpu.cu -o build/crmath-gpu -lgomp && build/crmath-gpu
 *
 * --fmad=false: the header's a*b+c are two roundings, on both sides (and
 * the defaults -ftz=false -prec-div=true -prec-sqrt=true must stay:
 * --use_fast_math changes them). -fopenmp spreads the host's half over the
 * cores (without it the host runs on one core, about 2 minutes a
 * function). Exit status 0 when device, host and CPU build agree
 * everywhere, 1 otherwise or when a CUDA call fails (it names the call and
 * the error).
 */
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>
#include "kernels/crmath.h"
#include "crmath_sum.h"

#define CK(call) do {                                                       \
        cudaError_t e_ = (call);                                            \
        if (e_ != cudaSuccess) {                                            \
            fprintf(stderr, "crmath-gpu: %s:%d: %s: %s\n", __FILE__, __LINE__, \
                    #call, cudaGetErrorString(e_));                         \
            exit(1);                                                        \
        }                                                                   \
    } while (0)

enum { F_EXP, F_TANH, F_LOG1P, F_SIGMOID, NFN };
static const char *const NAMES[NFN] = { "exp", "tanh", "log1p", "sigmoid" };
/* build/rel/crmath-check --sum on the CPU build (gcc 12, x86-64): write the
 * new figures here whenever crmath.h changes. */
static const uint64_t CPU_SUM[NFN] = {
    0xbfce31e136a7d48full, 0x42359c76f41dc0d3ull, 0x9af4fe6cf22d2ff4ull, 0x3bc8491ff0a0f686ull,
};

CRM_FN float eval(int f, float x)
{
    switch (f) {
    case F_EXP: return crm_expf(x);
    case F_TANH: return crm_tanhf(x);
    case F_LOG1P: return crm_log1pf(x);
    default: return crm_sigmoidf(x);
    }
}

/* out[i] = the canonical bits of f(input base + i), i < n */
__global__ void eval_range(int f, uint32_t base, uint32_t n, uint32_t *out)
{
    for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        out[i] = crm_sum_canon(eval(f, crm_from_fbits(base + i)));
}

#define CHUNK (1u << 26)            /* inputs per launch: 256 MiB of results */
#define SHOW 10                     /* mismatches printed per function */

int main(void)
{
    int ndev = 0;
    CK(cudaGetDeviceCount(&ndev));
    if (ndev < 1) { fprintf(stderr, "crmath-gpu: no CUDA device\n"); return 1; }
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    printf("device 0: %s, sm_%d%d\n", prop.name, prop.major, prop.minor);
    uint32_t *dev = NULL, *host = NULL;
    CK(cudaMalloc((void **)&dev, (size_t)CHUNK * sizeof *dev));
    CK(cudaMallocHost((void **)&host, (size_t)CHUNK * sizeof *host));
    int bad_any = 0;
    for (int f = 0; f < NFN; f++) {
        uint64_t mismatches = 0, sum_dev = 0, sum_host = 0;
        int shown = 0;
        for (uint64_t base = 0; base < (1ull << 32); base += CHUNK) {
            eval_range<<<prop.multiProcessorCount * 8, 256>>>(f, (uint32_t)base, CHUNK, dev);
            CK(cudaGetLastError());
            CK(cudaMemcpy(host, dev, (size_t)CHUNK * sizeof *host, cudaMemcpyDeviceToHost));
            uint64_t bad = 0, sd = 0, sh = 0;
#pragma omp parallel for reduction(+ : bad, sd, sh) schedule(static)
            for (int64_t i = 0; i < (int64_t)CHUNK; i++) {
                const uint32_t u = (uint32_t)(base + (uint64_t)i);
                const uint32_t want = crm_sum_canon(eval(f, crm_from_fbits(u)));
                sd += crm_sum_term(u, host[i]);
                sh += crm_sum_term(u, want);
                if (host[i] != want) {
                    bad++;
#pragma omp critical
                    if (shown < SHOW) {
                        shown++;
                        printf("  %s(%a) [0x%08x]: device 0x%08x, host 0x%08x\n", NAMES[f],
                               crm_from_fbits(u), u, host[i], want);
                    }
                }
            }
            mismatches += bad; sum_dev += sd; sum_host += sh;
        }
        printf("%-7s: 4294967296 inputs, device != host on %llu; checksum device 0x%016llx, "
               "host 0x%016llx, CPU build 0x%016llx%s\n", NAMES[f], (unsigned long long)mismatches,
               (unsigned long long)sum_dev, (unsigned long long)sum_host,
               (unsigned long long)CPU_SUM[f], sum_dev == CPU_SUM[f] ? "" : " (differs)");
        fflush(stdout);
        if (mismatches || sum_dev != sum_host || sum_dev != CPU_SUM[f]) bad_any = 1;
    }
    CK(cudaFreeHost(host));
    CK(cudaFree(dev));
    return bad_any;
}
