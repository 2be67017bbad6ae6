/// \file tests/fuzz/targets.h
/// The fuzz targets (one per parser): each returns 0 or aborts on a finding.
#ifndef CP_TESTS_FUZZ_TARGETS_H
#define CP_TESTS_FUZZ_TARGETS_H

#include <stddef.h>
#include <stdint.h>

int cpf_lcp_json(const uint8_t *data, size_t size); ///< cp_lcp_parse_json + round trip
int cpf_lcp_dat(const uint8_t *data, size_t size);  ///< cp_lcp_parse (detection, .dat)
int cpf_scene(const uint8_t *data, size_t size);    ///< cp_scene_parse + cp_system_build
int cpf_urdf(const uint8_t *data, size_t size);     ///< cp_urdf_parse
int cpf_task(const uint8_t *data, size_t size);     ///< cp_task_parse (planner task files)

#endif
