/*
 * fuzz: the harnesses' common entry point.  Each tests/fuzz/fuzz_<name>.c defines
 * LLVMFuzzerTestOneInput(), linked either with libFuzzer (make fuzz, clang) or with replay.c (a
 * plain main that feeds it every file of the given directories: make check replays the seed
 * corpora and every past crash input with the normal and the sanitizer builds).
 *
 * A harness must not leak, crash or trip a sanitizer on any input; errors are the expected
 * answer to bad input and are simply discarded.
 */
#ifndef BS_FUZZ_H
#define BS_FUZZ_H

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif
