/// \file planner/io/csv.h
/// CSV as RFC 4180 has it, for the trajectory files of `simulate --csv` and
/// `replay --csv` (docs/simulate.md, docs/replay.md): fields separated by
/// commas; a field holding a comma, a double quote, CR or LF is enclosed in
/// double quotes, with each double quote inside it doubled; every other
/// field is written as it is. Header names are quoted the same way, so a body
/// named `a,b` is one column. Records end in LF (the line break most tools
/// write; RFC 4180's readers, e.g. Python's csv module, accept it).
///
/// The state columns come from the state layout (planner/sim/statelayout.h):
/// the header and every row are made from the same layout, so they always
/// have the same width. Numbers are written with %.17g (they read back as
/// the same doubles). Write errors are left on the stream (ferror) for the
/// caller, which checks once when it closes the file.
#ifndef CP_PLANNER_CSV_H
#define CP_PLANNER_CSV_H

#include <stdio.h>

#include "models/scene.h"
#include "planner/sim/statelayout.h"

#ifdef __cplusplus
extern "C" {
#endif

/// 1 when s must be quoted (it holds ',', '"', CR or LF).
int cp_csv_needs_quotes(const char *s);
/// Writes s as one field (quoted when it must be).
void cp_csv_field(FILE *f, const char *s);
/// Writes the field printf would make of fmt. Returns 0, or -1 when out of
/// memory (nothing written).
int cp_csv_fieldf(FILE *f, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/// Writes `t` and a column per state entry ("box.x" .. "arm/elbow.qd"),
/// comma-separated, without the line end (the caller may add columns).
/// Returns 0, or -1 when out of memory.
int cp_csv_state_header(FILE *f, const cp_state_layout *l, const cp_scene *s);
/// Writes t and the l->n entries of x, comma-separated, without the line end.
void cp_csv_state_row(FILE *f, const cp_state_layout *l, double t,
                      const double *x);

#ifdef __cplusplus
}
#endif
#endif
