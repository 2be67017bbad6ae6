/* libFuzzer entry point of the task-file target (tests/fuzz/targets.c). */
#include "tests/fuzz/targets.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) { return cpf_task(data, size); }
