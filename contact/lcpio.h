/// \file contact/lcpio.h
/// Reading and writing LCPs as text (docs/formats.md §1). These functions parse
/// and format memory buffers; opening files is the caller's business, so this
/// module stays free of file I/O.
///
/// JSON form: {"M": [[row], ...], "q": [...], "name"?: "...", "comment"?: "..."}
/// with M row-major in the file (it is stored column-major in cp_lcp).
/// Siconos .dat form (storage type 0): n, 0, n, n, n n, then M column-major,
/// then q, then free text. Tokens are read in full (up to 511 characters;
/// longer ones are rejected with their line). Storage type 1 (sparse blocks) is rejected with
/// "unsupported storage type 1".
#ifndef CP_CONTACT_LCPIO_H
#define CP_CONTACT_LCPIO_H

#include <stddef.h>
#include "contact/lcp.h"
#include "models/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/// Parses the JSON form. Returns 0 and fills *out (owned by the caller), or
/// -1 with *err set (where = JSON path or "line L, column C").
int cp_lcp_parse_json(const char *text, size_t len, cp_lcp *out, cp_error *err);

/// Parses the Siconos .dat form. Returns 0 or -1 with *err (where = "line N").
int cp_lcp_parse_dat(const char *text, size_t len, cp_lcp *out, cp_error *err);

/// Parses by content, after skipping a UTF-8 byte-order mark: .dat when the
/// first non-space character can start a number (the size n), JSON when it
/// can start a JSON value ('{', '[', '"', true, false, null: a JSON document
/// that is not an object is named as such), else an "unknown format" error
/// that shows the character found. Both forms accept n <= CP_LCP_MAX_N, and
/// check that the input can hold n^2 + n numbers before allocating M.
int cp_lcp_parse(const char *text, size_t len, cp_lcp *out, cp_error *err);

/// Formats the JSON form (M row-major, full double precision, round-trips
/// exactly). Returns a malloc'd string or NULL when out of memory.
char *cp_lcp_format_json(const cp_lcp *lcp);

/// Formats the Siconos .dat form (storage type 0). malloc'd, or NULL.
char *cp_lcp_format_dat(const cp_lcp *lcp);

#ifdef __cplusplus
}
#endif
#endif
