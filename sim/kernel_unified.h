/*
 * sim/kernel_unified.c's interface: the shape of a unified-attention pass, or of one GPU
 * forward.
 * Included through sim/kernel_int.h, as the kernel files and their white-box tests use it.
 */
#ifndef BS_KERNEL_UNIFIED_H
#define BS_KERNEL_UNIFIED_H

#include "sim/kernel_state.h"

/* The unified shape (query tokens, shared blocks, unique blocks, causal) of IN's step and its
 * logits. */
void unified_shape(struct sim *s, struct lane *in, int32_t real[4], int32_t *logits);

/* The same as one GPU forward (execution mode cuda_graphs): (tokens, prefill context blocks,
 * decode blocks, prefill tokens). */
void forward_shape(struct sim *s, struct lane *in, int32_t real[4], int32_t *logits);

#endif
