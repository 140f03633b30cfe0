/* TEMPORARY scalar kernels for the lead's local work until the kernels branch lands. */
#include <math.h>
#include <string.h>
#include "kernels.h"
const float kern_e2m1[16] = {0,.5f,1,1.5f,2,3,4,6,-0.f,-.5f,-1,-1.5f,-2,-3,-4,-6};
float kern_e8m0(uint8_t e) { return e == 255 ? INFINITY : ldexpf(1.0f, (int)e - 127); }
float kern_dot_f32(const float *a, const float *b, int n) { float s = 0; for (int i = 0; i < n; i++) s = fmaf(a[i], b[i], s); return s; }
void kern_gemv_f32(const float *W, const float *x, float *y, int rows, int cols)
{ for (int r = 0; r < rows; r++) y[r] = kern_dot_f32(W + (size_t)r * cols, x, cols); }
void kern_gemv_bf16(const uint16_t *W, const float *x, float *y, int rows, int cols)
{ for (int r = 0; r < rows; r++) { float s = 0; const uint16_t *w = W + (size_t)r * cols; for (int c = 0; c < cols; c++) s = fmaf(bf16_to_f32(w[c]), x[c], s); y[r] = s; } }
void kern_gemv_mxfp4(const uint8_t *P, const uint8_t *S, const float *x, float *y, int rows, int cols)
{ for (int r = 0; r < rows; r++) { float s = 0; for (int c = 0; c < cols; c++) { uint8_t b = P[(size_t)r * (cols / 2) + c / 2]; int code = (c & 1) ? b >> 4 : b & 15; float w = kern_e2m1[code] * kern_e8m0(S[(size_t)r * (cols / 32) + c / 32]); s = fmaf(w, x[c], s); } y[r] = s; } }
void kern_gemm_f32(const float *W, const float *X, float *Y, int T, int rows, int cols)
{ for (int t = 0; t < T; t++) kern_gemv_f32(W, X + (size_t)t * cols, Y + (size_t)t * rows, rows, cols); }
void kern_gemm_bf16(const uint16_t *W, const float *X, float *Y, int T, int rows, int cols)
{ for (int t = 0; t < T; t++) kern_gemv_bf16(W, X + (size_t)t * cols, Y + (size_t)t * rows, rows, cols); }
void kern_gemm_mxfp4(const uint8_t *P, const uint8_t *S, const float *X, float *Y, int T, int rows, int cols)
{ for (int t = 0; t < T; t++) kern_gemv_mxfp4(P, S, X + (size_t)t * cols, Y + (size_t)t * rows, rows, cols); }
const char *kern_level(void) { return "scalar"; }
int kern_set_level(const char *n) { return 0; }
