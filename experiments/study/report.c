/* Reports of the paper's study (experiments/study/study.h): the words of the
 * tables, the CSV, Table 1, the per-problem tables, the summary, the
 * one-paragraph headline and the SVG plots. Pure formatting: every function
 * turns a cp_paper_study (or a row) into a malloc'd string or a word. */
#include "experiments/study/study.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* A growable string                                                        */
/* ------------------------------------------------------------------------ */

typedef struct sb {
  char *s;
  size_t len, cap;
  int oom;
} sb;

__attribute__((format(printf, 2, 3))) static void sbf(sb *b, const char *fmt, ...) {
  if (b->oom) return;
  for (;;) {
    va_list ap;
    va_start(ap, fmt);
    size_t room = b->cap - b->len;
    int k = vsnprintf(b->s ? b->s + b->len : NULL, b->s ? room : 0, fmt, ap);
    va_end(ap);
    if (k < 0) {
      b->oom = 1;
      return;
    }
    if (b->s && (size_t)k < room) {
      b->len += (size_t)k;
      return;
    }
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->len + (size_t)k + 1) cap *= 2;
    char *t = realloc(b->s, cap);
    if (!t) {
      b->oom = 1;
      return;
    }
    b->s = t;
    b->cap = cap;
  }
}

static char *sb_done(sb *b) {
  if (b->oom) {
    free(b->s);
    return NULL;
  }
  if (!b->s) return calloc(1, 1);
  return b->s;
}

/* ------------------------------------------------------------------------ */
/* Words of the tables                                                      */
/* ------------------------------------------------------------------------ */

const char *cp_paper_status_word(cp_paper_status s) {
  switch (s) {
  case CP_PAPER_SOLVED: return "solved";
  case CP_PAPER_FAILED: return "failed";
  case CP_PAPER_NO_SOLUTION: return "no_solution";
  }
  return "?";
}

const char *cp_paper_cert_word(cp_paper_cert c) {
  switch (c) {
  case CP_PAPER_CERT_SOLVABLE: return "solvable";
  case CP_PAPER_CERT_NONE: return "none";
  case CP_PAPER_CERT_UNDECIDED: return "undecided";
  }
  return "?";
}

const char *cp_paper_unique_word(cp_paper_unique u) {
  switch (u) {
  case CP_PAPER_UNIQUE: return "unique";
  case CP_PAPER_NOT_UNIQUE: return "not unique";
  case CP_PAPER_UNIQUE_UNDECIDED: return "undecided";
  case CP_PAPER_UNIQUE_NA: return "n/a";
  }
  return "?";
}

const char *cp_paper_source_word(cp_paper_cert_source s) {
  switch (s) {
  case CP_PAPER_SRC_NONE: return "";
  case CP_PAPER_SRC_MIP: return "mip";
  case CP_PAPER_SRC_LEMKE: return "lemke";
  case CP_PAPER_SRC_FIP: return "fip";
  case CP_PAPER_SRC_AUTO: return "auto";
  case CP_PAPER_SRC_PERSIST: return "persistent-lemke";
  }
  return "?";
}

const char *cp_paper_fip_cell(const cp_paper_row *r, char *buf, int size) {
  if (r->fip == CP_PAPER_SOLVED) snprintf(buf, (size_t)size, "%d", r->fip_iters);
  else if (r->fip_raw == CP_LCP_NO_STRICT_FEASIBLE) snprintf(buf, (size_t)size, "NFP");
  else if (r->fip_raw == CP_LCP_ITERATION_CAP) snprintf(buf, (size_t)size, "MAX");
  else snprintf(buf, (size_t)size, "NUM");
  return buf;
}

/* ------------------------------------------------------------------------ */
/* Aggregates                                                               */
/* ------------------------------------------------------------------------ */

static int lemke_first(const cp_paper_row *r) {
  return r->lemke == CP_PAPER_SOLVED && r->lemke_starts == 1;
}

typedef struct agg {
  int n;
  int lemke, lemke1, fip, either, autos, auto_none;
  double l_starts, l_iters, l1_iters, f_iters;
  int solvable, none, undecided, mip_limit;
  int uniq, nonuniq, uundec;
  int full_rank, within;
} agg;

static void agg_add(agg *a, const cp_paper_row *r) {
  a->n++;
  if (r->lemke == CP_PAPER_SOLVED) {
    a->lemke++;
    a->l_starts += r->lemke_starts;
    a->l_iters += r->lemke_iters;
  }
  if (lemke_first(r)) {
    a->lemke1++;
    a->l1_iters += r->lemke_iters;
  }
  if (r->fip == CP_PAPER_SOLVED) {
    a->fip++;
    a->f_iters += r->fip_iters;
  }
  if (r->lemke == CP_PAPER_SOLVED || r->fip == CP_PAPER_SOLVED) a->either++;
  if (r->autos == CP_PAPER_SOLVED) a->autos++;
  if (r->autos == CP_PAPER_NO_SOLUTION) a->auto_none++;
  if (r->cert == CP_PAPER_CERT_SOLVABLE) a->solvable++;
  else if (r->cert == CP_PAPER_CERT_NONE) a->none++;
  else a->undecided++;
  a->mip_limit += r->mip_hit_limit;
  if (r->unique == CP_PAPER_UNIQUE) a->uniq++;
  else if (r->unique == CP_PAPER_NOT_UNIQUE) a->nonuniq++;
  else if (r->unique == CP_PAPER_UNIQUE_UNDECIDED) a->uundec++;
  a->full_rank += r->full_rank;
  a->within += r->full_rank && r->within_bound; /* Theorem 1: both */
}

static double frac(int k, int n) { return n ? (double)k / n : 0.0; }

/* Distinct sizes, ascending; returns their number. */
static int sizes_of(const cp_paper_study *st, int *out, int cap) {
  int n = 0;
  for (int i = 0; i < st->n_rows; i++) {
    int s = st->rows[i].size, seen = 0;
    for (int k = 0; k < n; k++) seen |= out[k] == s;
    if (!seen && n < cap) out[n++] = s;
  }
  for (int i = 1; i < n; i++)
    for (int k = i; k > 0 && out[k - 1] > out[k]; k--) {
      int t = out[k];
      out[k] = out[k - 1];
      out[k - 1] = t;
    }
  return n;
}

/* The paper's Table 1 (its "frac. solved", "ave. # restarts" -- defined in
 * the text as the average number of starts -- and "ave. # iter."). The
 * extracted text of the size-120 row reads "0.10 1.0 ! 100 0.70 ! 300": a
 * symbol lost in extraction; shown as NAN here. */
typedef struct paper_t1 {
  int size, sets;
  double lf, ls, li, ff, fi;
} paper_t1;
static const paper_t1 paper_table1[] = {
    {2, 20, 1.00, 1.0, 2.0, 0.50, 8.4},
    {10, 60, 0.92, 1.3, 8.9, 0.35, 10.4},
    {16, 10, 1.00, 1.4, 20.0, 1.00, 17.2},
    {30, 26, 0.62, 1.7, 44.1, 0.42, 19.6},
    {50, 20, 0.35, 2.0, 107.4, 0.30, 61.1},
    {90, 23, 0.00, NAN, NAN, 0.35, 30.4},
    {120, 10, 0.10, 1.0, NAN, 0.70, NAN},
    {150, 6, 0.00, NAN, NAN, 0.50, 46.3},
    {170, 10, 0.00, NAN, NAN, 0.00, NAN},
};
#define PAPER_T1_ROWS ((int)(sizeof paper_table1 / sizeof paper_table1[0]))

static void cell(sb *b, double v, const char *fmt) {
  if (isnan(v)) sbf(b, " - |");
  else {
    sbf(b, " ");
    sbf(b, fmt, v);
    sbf(b, " |");
  }
}

/* ------------------------------------------------------------------------ */
/* CSV                                                                      */
/* ------------------------------------------------------------------------ */

static const char *solver_word(int s) {
  return s < 0 ? "" : cp_lcp_solver_name((cp_lcp_solver)s);
}

static const char *why_word(cp_paper_unique_why w) {
  switch (w) {
  case CP_PAPER_UW_DECIDED: return "";
  case CP_PAPER_UW_LIMIT: return "limit";
  case CP_PAPER_UW_SAME_ACCEL: return "same accelerations";
  case CP_PAPER_UW_SINGULAR: return "singular basis";
  case CP_PAPER_UW_MIP_FAILED: return "mip failed";
  }
  return "?";
}

char *cp_paper_format_csv(const cp_paper_study *st) {
  sb b = {0};
  sbf(&b, "problem,size,nb,nS,nR,mu,lemke_status,lemke_starts,lemke_iters,fip_status,"
          "fip_iters,auto_status,certify,unique,"
          "nc,n_u,n_joints,lemke_first_solved,lemke_first_iters,lemke_pivots,lemke_reason,"
          "fip_marker,fip_reason,auto_solver,auto_iters,auto_ran,auto_reason,mip_status,"
          "mip_nodes,mip_time_limit_hit,mip_from_auto,mip_denoised,mip_first_status,mip_reason,persist_status,persist_starts,persist_iters,"
          "cert_source,conflict,unique_why,jacobian_rank,full_rank,friction_bound,within_bound,"
          "t_lemke_s,t_fip_s,t_auto_s,t_mip_s,t_persist_s,t_unique_s,t_total_s\n");
  for (int i = 0; i < st->n_rows; i++) {
    const cp_paper_row *r = &st->rows[i];
    char fipc[16], piv[64] = "";
    for (int s = 0; s < r->lemke_starts && s < 4; s++)
      snprintf(piv + strlen(piv), sizeof piv - strlen(piv), "%s%d", s ? ";" : "",
               r->lemke_pivots[s]);
    sbf(&b, "%d,%d,%d,%d,%d,%.1f,%s,%d,%d,%s,%d,%s,%s,%s,", r->problem, r->size, r->nb,
        r->ns, r->nr, r->mu, cp_paper_status_word(r->lemke), r->lemke_starts, r->lemke_iters,
        cp_paper_status_word(r->fip), r->fip_iters, cp_paper_status_word(r->autos),
        cp_paper_cert_word(r->cert), cp_paper_unique_word(r->unique));
    sbf(&b, "%d,%d,%d,%d,%d,%s,%s,%s,%s,%s,%d,%s%s%s,%s,", r->nc, r->n_u, r->n_joints,
        lemke_first(r), r->lemke_first_iters, piv, r->lemke_reason,
        cp_paper_fip_cell(r, fipc, sizeof fipc), r->fip_reason, solver_word(r->auto_solver),
        r->auto_iters, r->auto_ran[0] ? "L" : "", r->auto_ran[1] ? "F" : "",
        r->auto_ran[2] ? "C" : "", r->auto_reason);
    sbf(&b, "%s,%d,%d,%d,%d,%s,%s,%s,%d,%d,%s,%d,%s,",
        r->mip_ran ? cp_lcp_status_name(r->mip_raw) : "", r->mip_nodes, r->mip_hit_limit,
        r->mip_from_auto, r->mip_denoised, r->mip_ran ? cp_lcp_status_name(r->mip_first_raw) : "",
        r->mip_reason,
        r->persist_ran ? cp_lcp_status_name(r->persist_raw) : "", r->persist_starts,
        r->persist_iters,
        cp_paper_source_word(r->cert_source), r->conflict, why_word(r->unique_why));
    if (isinf(r->friction_bound)) sbf(&b, "%d,%d,inf,%d,", r->jacobian_rank, r->full_rank, r->within_bound);
    else sbf(&b, "%d,%d,%.6g,%d,", r->jacobian_rank, r->full_rank, r->friction_bound, r->within_bound);
    sbf(&b, "%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f\n", r->t_lemke, r->t_fip, r->t_auto, r->t_mip,
        r->t_persist, r->t_unique, r->t_total);
  }
  return sb_done(&b);
}

/* ------------------------------------------------------------------------ */
/* Table 1                                                                  */
/* ------------------------------------------------------------------------ */

char *cp_paper_format_table1_csv(const cp_paper_study *st) {
  sb b = {0};
  int sizes[256];
  int ns = sizes_of(st, sizes, 256);
  sbf(&b, "size,data_sets,lemke_frac,lemke_ave_starts,lemke_ave_iters,lemke_first_frac,"
          "fip_frac,fip_ave_iters,either_frac,auto_frac,solvable,none,undecided,"
          "mip_time_limit_hits,unique,not_unique,unique_undecided\n");
  for (int s = 0; s <= ns; s++) {
    agg a = {0};
    for (int i = 0; i < st->n_rows; i++)
      if (s == ns || st->rows[i].size == sizes[s]) agg_add(&a, &st->rows[i]);
    if (s == ns) sbf(&b, "all,");
    else sbf(&b, "%d,", sizes[s]);
    sbf(&b, "%d,%.3f,", a.n, frac(a.lemke, a.n));
    if (a.lemke) sbf(&b, "%.2f,%.2f,", a.l_starts / a.lemke, a.l_iters / a.lemke);
    else sbf(&b, ",,");
    sbf(&b, "%.3f,%.3f,", frac(a.lemke1, a.n), frac(a.fip, a.n));
    if (a.fip) sbf(&b, "%.2f,", a.f_iters / a.fip);
    else sbf(&b, ",");
    sbf(&b, "%.3f,%.3f,%d,%d,%d,%d,%d,%d,%d\n", frac(a.either, a.n), frac(a.autos, a.n),
        a.solvable, a.none, a.undecided, a.mip_limit, a.uniq, a.nonuniq, a.uundec);
  }
  return sb_done(&b);
}

char *cp_paper_format_table1_md(const cp_paper_study *st) {
  sb b = {0};
  int sizes[256];
  int ns = sizes_of(st, sizes, 256);
  sbf(&b, "# Table 1, reproduced\n\n"
          "The paper's columns (Trinkle, Pang, Sudarsky and Lo 1995, Table 1): `size` is the\n"
          "dimension of M, `# data sets` the number of data sets of that size, `frac. solved`\n"
          "the fraction solved, `ave. # starts` the average number of Lemke starts of the data\n"
          "sets it eventually solved, `ave. # iter.` the average iterations of a solved data set\n"
          "(for Lemke including the pivots of the failed starts before the successful one).\n"
          "Lemke: covering vector of ones, up to 3 random restarts, at most 100 pivots per\n"
          "start. FIP: at most 300 iterations, complementarity gap below 1e-6.\n\n"
          "The columns after the double bar are new: Lemke solved at the first start; solved\n"
          "by either paper solver; the auto strategy; the certificate (a verified solution, or\n"
          "the MIP's proof that none exists, or undecided within its limit) and whether\n"
          "the accelerations are unique (`u` unique / `n` not unique / `?` undecided).\n\n");
  sbf(&b, "| size | # data sets | Lemke frac. solved | ave. # starts | ave. # iter. | "
          "FIP frac. solved | ave. # iter. || Lemke 1st start | Lemke or FIP | auto | "
          "solvable / none / undecided | unique u / n / ? |\n");
  sbf(&b, "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|:---:|:---:|\n");
  for (int s = 0; s <= ns; s++) {
    agg a = {0};
    for (int i = 0; i < st->n_rows; i++)
      if (s == ns || st->rows[i].size == sizes[s]) agg_add(&a, &st->rows[i]);
    if (s == ns) sbf(&b, "| **all** |");
    else sbf(&b, "| %d |", sizes[s]);
    sbf(&b, " %d | %.2f |", a.n, frac(a.lemke, a.n));
    cell(&b, a.lemke ? a.l_starts / a.lemke : NAN, "%.1f");
    cell(&b, a.lemke ? a.l_iters / a.lemke : NAN, "%.1f");
    sbf(&b, " %.2f |", frac(a.fip, a.n));
    cell(&b, a.fip ? a.f_iters / a.fip : NAN, "%.1f");
    sbf(&b, " %.2f | %.2f | %.2f | %d / %d / %d | %d / %d / %d |\n", frac(a.lemke1, a.n),
        frac(a.either, a.n), frac(a.autos, a.n), a.solvable, a.none, a.undecided, a.uniq,
        a.nonuniq, a.uundec);
  }
  sbf(&b, "\n## Side by side with the paper's rows\n\n"
          "Paper values first, this run's second (`-`: nothing solved, so no average; the\n"
          "paper's size-120 averages are lost in the text extraction, which reads \"1.0 ! 100\"\n"
          "and \"0.70 ! 300\").\n\n");
  sbf(&b, "| size | # data sets | Lemke frac. solved | ave. # starts | ave. # iter. | "
          "FIP frac. solved | ave. # iter. |\n");
  sbf(&b, "|---:|---:|---:|---:|---:|---:|---:|\n");
  for (int k = 0; k < PAPER_T1_ROWS; k++) {
    const paper_t1 *p = &paper_table1[k];
    agg a = {0};
    for (int i = 0; i < st->n_rows; i++)
      if (st->rows[i].size == p->size) agg_add(&a, &st->rows[i]);
    char ours[7][32];
    snprintf(ours[0], 32, "%d", a.n);
    snprintf(ours[1], 32, "%.2f", frac(a.lemke, a.n));
    snprintf(ours[2], 32, a.lemke ? "%.1f" : "-", a.lemke ? a.l_starts / a.lemke : 0.0);
    snprintf(ours[3], 32, a.lemke ? "%.1f" : "-", a.lemke ? a.l_iters / a.lemke : 0.0);
    snprintf(ours[4], 32, "%.2f", frac(a.fip, a.n));
    snprintf(ours[5], 32, a.fip ? "%.1f" : "-", a.fip ? a.f_iters / a.fip : 0.0);
    if (!a.n)
      for (int c = 0; c < 6; c++) snprintf(ours[c], 32, "(none)");
    char pv[6][16];
    const double pvals[6] = {p->sets, p->lf, p->ls, p->li, p->ff, p->fi};
    const char *fm[6] = {"%.0f", "%.2f", "%.1f", "%.1f", "%.2f", "%.1f"};
    for (int c = 0; c < 6; c++) {
      if (isnan(pvals[c])) snprintf(pv[c], 16, "-");
      else snprintf(pv[c], 16, fm[c], pvals[c]);
    }
    sbf(&b, "| %d | %s / %s | %s / %s | %s / %s | %s / %s | %s / %s | %s / %s |\n", p->size,
        pv[0], ours[0], pv[1], ours[1], pv[2], ours[2], pv[3], ours[3], pv[4], ours[4], pv[5],
        ours[5]);
  }
  return sb_done(&b);
}

/* ------------------------------------------------------------------------ */
/* Per-problem tables (Tables 2-4)                                          */
/* ------------------------------------------------------------------------ */

char *cp_paper_format_problems_md(const cp_paper_study *st) {
  sb b = {0};
  sbf(&b, "# Every problem, in the form of Tables 2-4\n\n"
          "Columns as in the paper: `nb` passive (free) bodies, `nS` sliding and `nR` rolling\n"
          "contacts, `L-starts` the number of Lemke starts (`4F`: failed at all four),\n"
          "`L-iter` Lemke's pivots over all its starts, `FIP-iter` FIP's iterations (`MAX`: no\n"
          "convergence in 300 iterations, `NFP`: phase I found no strictly feasible point,\n"
          "`NUM`: a numerical failure). New columns: the auto strategy (and the solver that\n"
          "answered), the certificate, uniqueness of the accelerations, the rank of the\n"
          "system Jacobian G (of 3 nc columns) and Proposition 3's friction bound mu_bar\n"
          "(Theorem 1 needs full column rank and mu < mu_bar; mu_bar = 0 when Proposition 3's\n"
          "matrix B~ is not positive definite, inf when no contact slides).\n");
  for (int k = 0; k < st->n_problems; k++) {
    const cp_paper_problem *p = &st->problems[k];
    sbf(&b, "\n## Problem %d: size %d, nb %d, nS %d, nR %d\n\n", k + 1, p->size, p->nb, p->ns,
        p->nr);
    sbf(&b, "%d contacts, %d fixed bodies (with the ground), %d finger%s with %d joints, "
            "n_u = %d; generated at attempt %d%s%s%s.\n\n",
        p->nc, p->n_fixed, p->n_fingers, p->n_fingers == 1 ? "" : "s", p->n_joints, p->n_u,
        p->attempts, p->spec.note ? " (mirrors " : "", p->spec.note ? p->spec.note : "",
        p->spec.note ? ")" : "");
    sbf(&b, "| size | nb | nS | nR | mu | L-starts | L-iter | FIP-iter | auto | certificate "
            "| unique | rank G | mu_bar |\n");
    sbf(&b, "|---:|---:|---:|---:|---:|---:|---:|---:|:---|:---|:---|---:|---:|\n");
    for (int j = 0; j < CP_PAPER_NMU; j++) {
      const cp_paper_row *r = &st->rows[k * CP_PAPER_NMU + j];
      char ls[16], li[16], fc[16], au[48], mb[32];
      if (r->lemke == CP_PAPER_SOLVED) {
        snprintf(ls, sizeof ls, "%d", r->lemke_starts);
        snprintf(li, sizeof li, "%d", r->lemke_iters);
      } else {
        snprintf(ls, sizeof ls, "%dF", r->lemke_starts);
        snprintf(li, sizeof li, "-");
      }
      cp_paper_fip_cell(r, fc, sizeof fc);
      if (r->autos == CP_PAPER_SOLVED)
        snprintf(au, sizeof au, "solved (%s)", cp_lcp_solver_name((cp_lcp_solver)r->auto_solver));
      else
        snprintf(au, sizeof au, "%s", cp_paper_status_word(r->autos));
      if (isinf(r->friction_bound)) snprintf(mb, sizeof mb, "inf");
      else snprintf(mb, sizeof mb, "%.3g", r->friction_bound);
      char ce[64];
      if (r->cert == CP_PAPER_CERT_SOLVABLE)
        snprintf(ce, sizeof ce, "solvable (%s)", cp_paper_source_word(r->cert_source));
      else
        snprintf(ce, sizeof ce, "%s", cp_paper_cert_word(r->cert));
      sbf(&b, "| %d | %d | %d | %d | %.1f | %s | %s | %s | %s | %s%s | %s | %d/%d | %s |\n",
          r->size, r->nb, r->ns, r->nr, r->mu, ls, li, fc, au, ce,
          r->mip_hit_limit ? " (MIP limit)" : "", cp_paper_unique_word(r->unique),
          r->jacobian_rank, 3 * r->nc, mb);
    }
  }
  return sb_done(&b);
}

/* ------------------------------------------------------------------------ */
/* Summary                                                                  */
/* ------------------------------------------------------------------------ */

static void pct(sb *b, int k, int n) { sbf(b, "%d of %d (%.0f%%)", k, n, n ? 100.0 * k / n : 0.0); }

char *cp_paper_format_summary_md(const cp_paper_study *st) {
  sb b = {0};
  agg a = {0};
  for (int i = 0; i < st->n_rows; i++) agg_add(&a, &st->rows[i]);
  const int N = st->n_rows;
  int smin = 1 << 30, smax = 0;
  for (int i = 0; i < N; i++) {
    if (st->rows[i].size < smin) smin = st->rows[i].size;
    if (st->rows[i].size > smax) smax = st->rows[i].size;
  }
  sbf(&b, "# The paper's computational study, reproduced\n\n");
  sbf(&b, "Command: `%s`\n\n", st->command);
  sbf(&b, "%d problems, %d data sets (mu = 0.1, ..., 1.0 each), LCP sizes %d..%d; seed %llu; "
          "%d worker process%s; certificate MIP limit %ld branch-and-bound nodes per data set "
          "(also the auto strategy's; safety net %.0f s), uniqueness search %ld nodes per "
          "certify call (safety net %.0f s) and at most %d cuts.\n"
          "Wall time: %.1f s generating and writing the data sets, %.1f s solving "
          "(1-minute load average at the start: %.2f).\n\n",
          st->n_problems, N, smin, smax, (unsigned long long)st->opt.seed, st->opt.jobs,
          st->opt.jobs == 1 ? "" : "es", st->opt.node_limit, st->opt.time_limit_s,
          st->opt.unique_node_limit, st->opt.unique_time_limit_s, st->opt.unique_max_cuts, st->gen_s, st->run_s, st->load1);
  const double sc = N / 328.0;
  sbf(&b, "## Headline numbers\n\n");
  sbf(&b, "| | paper (328 data sets) | this run (%d data sets) |\n|:---|:---|:---|\n", N);
  sbf(&b, "| Lemke, first start (covering vector of ones) | 136 (41%%) | ");
  pct(&b, a.lemke1, N);
  sbf(&b, " |\n| Lemke, with up to 3 restarts | \"about 10%% more than FIP\" | ");
  pct(&b, a.lemke, N);
  sbf(&b, " |\n| FIP | 195 (59%%) | ");
  pct(&b, a.fip, N);
  sbf(&b, " |\n| Lemke or FIP | 228 (70%%) | ");
  pct(&b, a.either, N);
  sbf(&b, " |\n| auto strategy (Lemke, FIP, MIP) | - | ");
  pct(&b, a.autos, N);
  sbf(&b, " solved, %d proven to have no solution |\n", a.auto_none);
  sbf(&b, "| certificate: has a solution | unknown | ");
  pct(&b, a.solvable, N);
  sbf(&b, " |\n| certificate: proven to have none | unknown | ");
  pct(&b, a.none, N);
  sbf(&b, " |\n| certificate: undecided within the limit | unknown | ");
  pct(&b, a.undecided, N);
  sbf(&b, " |\n\n(For scale: the paper's counts times %d/328 are %.0f, %.0f and %.0f.)\n\n", N,
      136 * sc, 195 * sc, 228 * sc);

  /* The open question. */
  int fail = 0, f_sol = 0, f_none = 0, f_und = 0, f_auto = 0;
  int by[CP_PAPER_SRC_PERSIST + 1] = {0};
  for (int i = 0; i < N; i++) {
    const cp_paper_row *r = &st->rows[i];
    if (r->lemke == CP_PAPER_SOLVED || r->fip == CP_PAPER_SOLVED) continue;
    fail++;
    if (r->cert == CP_PAPER_CERT_SOLVABLE) {
      f_sol++;
      by[r->cert_source]++;
    } else if (r->cert == CP_PAPER_CERT_NONE) {
      f_none++;
    } else {
      f_und++;
    }
    f_auto += r->autos == CP_PAPER_SOLVED;
  }
  sbf(&b, "## The paper's open question\n\n"
          "\"Since the data sets were generated randomly, we do not know a priori how many had\n"
          "solutions. It is conceivable that the unsolved data sets did not have solutions.\"\n\n");
  sbf(&b, "Both paper-style solvers (Lemke with restarts, FIP) failed on %d data sets. Of "
          "these, **%d have no solution** (the MIP proves alpha* = 0, confirmed by a second, "
          "independent MIP solve), **%d have one** (verified solution found by the auto "
          "strategy %d, the MIP %d, the persistent Lemke %d) and **%d are undecided**. The "
          "auto strategy solved %d of them.\n\n",
          fail, f_none, f_sol, by[CP_PAPER_SRC_AUTO], by[CP_PAPER_SRC_MIP],
          by[CP_PAPER_SRC_PERSIST], f_und, f_auto);
  if (fail) {
    sbf(&b, "| problem | size | nb | nS | nR | mu | L-starts | FIP | auto | MIP | persistent "
            "Lemke | certificate |\n|---:|---:|---:|---:|---:|---:|---:|:---|:---|:---|:---|:---|\n");
    for (int i = 0; i < N; i++) {
      const cp_paper_row *r = &st->rows[i];
      if (r->lemke == CP_PAPER_SOLVED || r->fip == CP_PAPER_SOLVED) continue;
      char fc[16], pers[64];
      if (!r->persist_ran) snprintf(pers, sizeof pers, "-");
      else if (r->persist_raw == CP_LCP_SOLVED)
        snprintf(pers, sizeof pers, "solved at start %d", r->persist_starts);
      else snprintf(pers, sizeof pers, "%s (%d starts)", cp_lcp_status_name(r->persist_raw), r->persist_starts);
      sbf(&b, "| %d | %d | %d | %d | %d | %.1f | %dF | %s | %s%s%s | %s | %s | **%s** |\n",
          r->problem, r->size, r->nb, r->ns, r->nr, r->mu, r->lemke_starts,
          cp_paper_fip_cell(r, fc, sizeof fc), cp_paper_status_word(r->autos),
          r->autos == CP_PAPER_SOLVED ? " by " : "",
          r->autos == CP_PAPER_SOLVED ? solver_word(r->auto_solver) : "",
          !r->mip_ran ? "-"
          : r->mip_raw == CP_LCP_INFEASIBLE ? "no solution (alpha* = 0)"
                                            : cp_lcp_status_name(r->mip_raw),
          pers, cp_paper_cert_word(r->cert));
    }
    sbf(&b, "\n");
  }

  /* Auto against the certificate. */
  int miss = 0;
  for (int i = 0; i < N; i++)
    if (st->rows[i].cert == CP_PAPER_CERT_SOLVABLE && st->rows[i].autos != CP_PAPER_SOLVED) miss++;
  sbf(&b, "## The auto strategy against the certificate\n\n");
  if (!miss)
    sbf(&b, "The auto strategy solved every one of the %d data sets that have a verified "
            "solution, and reported \"no solution\" on %d data sets, each of them one the MIP "
            "proves unsolvable.\n\n", a.solvable, a.auto_none);
  else {
    sbf(&b, "The auto strategy missed %d of the %d data sets with a verified solution (a "
            "solution exists: the source below found and verified it):\n\n",
        miss, a.solvable);
    sbf(&b, "| problem | size | mu | auto | why auto failed | MIP | found by |\n"
            "|---:|---:|---:|:---|:---|:---|:---|\n");
    for (int i = 0; i < N; i++) {
      const cp_paper_row *r = &st->rows[i];
      if (r->cert != CP_PAPER_CERT_SOLVABLE || r->autos == CP_PAPER_SOLVED) continue;
      sbf(&b, "| %d | %d | %.1f | %s | %s | %s | %s |\n", r->problem, r->size, r->mu,
          cp_paper_status_word(r->autos), r->auto_reason[0] ? r->auto_reason : "-",
          r->mip_reason[0] ? r->mip_reason : r->mip_ran ? cp_lcp_status_name(r->mip_raw) : "-",
          cp_paper_source_word(r->cert_source));
    }
    sbf(&b, "\n");
  }
  int conflicts = 0, und_limit = 0, und_other = 0;
  for (int i = 0; i < N; i++) {
    conflicts += st->rows[i].conflict;
    if (st->rows[i].cert == CP_PAPER_CERT_UNDECIDED) {
      if (st->rows[i].mip_hit_limit) und_limit++;
      else und_other++;
    }
  }
  if (conflicts)
    sbf(&b, "**%d data sets where the MIP said \"none\" but a solver found a verified "
            "solution** (the verified solution wins; see the CSV's `conflict` column).\n\n",
        conflicts);
  int mip_n = 0, mip_sol = 0, mip_none = 0, mip_den = 0, mip_den_fixed = 0, by_solver = 0;
  for (int i = 0; i < N; i++) {
    const cp_paper_row *r = &st->rows[i];
    by_solver += r->lemke == CP_PAPER_SOLVED || r->fip == CP_PAPER_SOLVED || r->autos == CP_PAPER_SOLVED;
    if (!r->mip_ran) continue;
    mip_n++;
    mip_sol += r->mip_raw == CP_LCP_SOLVED;
    mip_none += r->mip_raw == CP_LCP_INFEASIBLE;
    mip_den += r->mip_denoised;
    mip_den_fixed += r->mip_denoised && (r->mip_raw == CP_LCP_SOLVED || r->mip_raw == CP_LCP_INFEASIBLE);
  }
  sbf(&b, "Where the certificate comes from: %d data sets have a verified solution from the "
          "paper's Lemke, FIP or the auto strategy; the MIP ran on %d (%s): it found a "
          "verified solution on %d, proved there is none on %d, reached its limit (%ld nodes or "
          "%.0f s) on %d. ",
      by_solver, mip_n,
      st->opt.mip_all ? "every data set: --mip-all" : "where no solver had a verified solution",
      mip_sol, mip_none, st->opt.node_limit, st->opt.time_limit_s, a.mip_limit);
  if (a.undecided)
    sbf(&b, "Of the %d undecided data sets, %d are undecided because of that limit and %d "
            "because the MIP ended without a verified answer (`mip_reason` in "
            "datasets.csv).\n\n", a.undecided, und_limit, und_other);
  else
    sbf(&b, "No data set is left undecided.\n\n");
  int bad1 = 0, bad2 = 0;
  for (int i = 0; i < N; i++) {
    const cp_paper_row *r = &st->rows[i];
    bad1 += r->autos == CP_PAPER_SOLVED && r->cert != CP_PAPER_CERT_SOLVABLE;
    bad2 += r->cert == CP_PAPER_CERT_NONE && r->autos != CP_PAPER_NO_SOLUTION;
  }
  sbf(&b, "Consistency: auto solved but the certificate is not \"solvable\": %d data sets; "
          "certificate \"none\" but auto did not report \"no solution\": %d data sets.\n\n",
      bad1, bad2);
  if (mip_den)
    sbf(&b, "**Rounding noise in q**: on %d MIP runs GLPK's first answer was not usable because "
            "q holds rounding noise (entries of about 1e-15 |q|, e.g. the b_t of a rolling "
            "contact that is zero in exact arithmetic: GLPK then returns an \"optimal\" point "
            "of (C1) that violates its equality rows); cp_certify retried with those entries "
            "set to zero (|q_i| <= 1e-12 max(1, |q|_inf)), accepting a solution only after the "
            "check on the original data, and the retry decided %d of them (found while running "
            "this study; the retry lives in contact/certify.c, so auto has it too).\n\n",
        mip_den, mip_den_fixed);

  /* Uniqueness. */
  int uw[CP_PAPER_UW_MIP_FAILED + 1] = {0};
  for (int i = 0; i < N; i++)
    if (st->rows[i].unique == CP_PAPER_UNIQUE_UNDECIDED) uw[st->rows[i].unique_why]++;
  sbf(&b, "## Uniqueness of the accelerations\n\n"
          "Of the %d data sets with a solution: %d unique, %d not unique (two verified "
          "solutions with different accelerations), %d undecided: %d have a second solution "
          "of another support with the same accelerations (forces differ, u' does not: the "
          "search stops there), %d stopped at a node, time or cut limit, %d have a single support "
          "with a singular basis, %d where the MIP gave no verified point.\n\n",
          a.solvable, a.uniq, a.nonuniq, a.uundec, uw[CP_PAPER_UW_SAME_ACCEL],
          uw[CP_PAPER_UW_LIMIT], uw[CP_PAPER_UW_SINGULAR], uw[CP_PAPER_UW_MIP_FAILED]);

  /* Theorem 1's assumptions. */
  int solved_within = 0, solved_full = 0, solved_n = 0;
  agg fr = {0}, rd = {0};
  for (int i = 0; i < N; i++) {
    const cp_paper_row *r = &st->rows[i];
    if (r->full_rank) agg_add(&fr, r);
    else agg_add(&rd, r);
    if (r->lemke == CP_PAPER_SOLVED || r->fip == CP_PAPER_SOLVED) {
      solved_n++;
      solved_full += r->full_rank;
      solved_within += r->full_rank && r->within_bound;
    }
  }
  sbf(&b, "## Theorem 1's assumptions\n\n"
          "\"We do not know if these assumptions are satisfied by the data sets whose\n"
          "solutions were found. Our suspicion is that they are not.\" Of the %d data sets the "
          "paper-style solvers solved, %d have a system Jacobian of full column rank and %d "
          "also have every friction coefficient below Proposition 3's bound mu_bar (Theorem 1 "
          "then guarantees existence and uniqueness). Over all data sets: %d full rank, %d "
          "within the bound as well.\n\n",
          solved_n, solved_full, solved_within, a.full_rank, a.within);
  sbf(&b, "\"The FIP method was superior when the system Jacobian did not have full column "
          "rank\": here, on the %d data sets with a rank-deficient G, Lemke (with restarts) "
          "solved %.0f%% and FIP %.0f%%; on the %d with full rank, Lemke %.0f%% and FIP "
          "%.0f%%.\n\n",
          rd.n, 100 * frac(rd.lemke, rd.n), 100 * frac(rd.fip, rd.n), fr.n,
          100 * frac(fr.lemke, fr.n), 100 * frac(fr.fip, fr.n));

  /* Failures in bunches. */
  int pl = 0, pl_suffix = 0, pf = 0, pf_suffix = 0;
  for (int k = 0; k < st->n_problems; k++) {
    for (int s = 0; s < 2; s++) {
      int any = 0, suffix = 1, seen_fail = 0;
      for (int j = 0; j < CP_PAPER_NMU; j++) {
        const cp_paper_row *r = &st->rows[k * CP_PAPER_NMU + j];
        int f = s == 0 ? r->lemke != CP_PAPER_SOLVED : r->fip != CP_PAPER_SOLVED;
        any |= f;
        if (seen_fail && !f) suffix = 0;
        seen_fail |= f;
      }
      if (any && s == 0) pl++, pl_suffix += suffix;
      if (any && s == 1) pf++, pf_suffix += suffix;
    }
  }
  sbf(&b, "## Failures in bunches\n\n"
          "The paper: \"for a given problem, one or both algorithms typically failed for all "
          "values of the coefficient of friction above some bound\". Here Lemke failed on some "
          "data set of %d problems, and on %d of them exactly for all mu above some bound; FIP "
          "on %d problems, %d of them above a bound.\n",
          pl, pl_suffix, pf, pf_suffix);
  return sb_done(&b);
}

/* ------------------------------------------------------------------------ */
/* SVG                                                                      */
/* ------------------------------------------------------------------------ */

typedef struct series {
  const char *name, *color;
  int n;
  double x[256], y[256];
  int dashed, hollow;
} series;

static double nice_step(double range, int target) {
  double raw = range / target, p = pow(10, floor(log10(raw))), m = raw / p;
  return (m < 1.5 ? 1 : m < 3 ? 2 : m < 7 ? 5 : 10) * p;
}

static void svg_plot(sb *b, const char *title, const char *xlabel, const char *ylabel,
                     double x0, double x1, double y0, double y1, const series *S, int ns) {
  const double W = 760, H = 460, L = 70, R = 210, T = 46, B = 60;
  const double pw = W - L - R, ph = H - T - B;
#define PX(x) (L + ((x) - x0) / (x1 - x0) * pw)
#define PY(y) (T + ph - ((y) - y0) / (y1 - y0) * ph)
  sbf(b, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
         "viewBox=\"0 0 %.0f %.0f\" font-family=\"sans-serif\" font-size=\"12\">\n",
      W, H, W, H);
  sbf(b, "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n");
  sbf(b, "<text x=\"%.0f\" y=\"24\" font-size=\"15\" text-anchor=\"middle\">%s</text>\n",
      L + pw / 2, title);
  double xs = nice_step(x1 - x0, 8), ys = nice_step(y1 - y0, 5);
  for (double x = ceil(x0 / xs) * xs; x <= x1 + 1e-9; x += xs) {
    sbf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>\n", PX(x), T,
        PX(x), T + ph);
    sbf(b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%g</text>\n", PX(x), T + ph + 18, x);
  }
  for (double y = ceil(y0 / ys) * ys; y <= y1 + 1e-9; y += ys) {
    sbf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>\n", L, PY(y),
        L + pw, PY(y));
    sbf(b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%g</text>\n", L - 6, PY(y) + 4, y);
  }
  sbf(b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" "
         "stroke=\"black\"/>\n", L, T, pw, ph);
  sbf(b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n", L + pw / 2, H - 16,
      xlabel);
  sbf(b, "<text transform=\"translate(18,%.1f) rotate(-90)\" text-anchor=\"middle\">%s</text>\n",
      T + ph / 2, ylabel);
  for (int s = 0; s < ns; s++) {
    const series *se = &S[s];
    if (se->n > 1) {
      sbf(b, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.8\"%s points=\"", se->color,
          se->dashed ? " stroke-dasharray=\"6,4\"" : "");
      for (int i = 0; i < se->n; i++)
        if (!isnan(se->y[i])) sbf(b, "%.1f,%.1f ", PX(se->x[i]), PY(se->y[i]));
      sbf(b, "\"/>\n");
    }
    for (int i = 0; i < se->n; i++)
      if (!isnan(se->y[i]))
        sbf(b, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" fill=\"%s\" stroke=\"%s\"/>\n",
            PX(se->x[i]), PY(se->y[i]), se->hollow ? "white" : se->color, se->color);
    const double ly = T + 10 + 20 * s;
    sbf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
           "stroke-width=\"1.8\"%s/>\n", L + pw + 12, ly, L + pw + 36, ly, se->color,
        se->dashed ? " stroke-dasharray=\"6,4\"" : "");
    sbf(b, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" fill=\"%s\" stroke=\"%s\"/>\n",
        L + pw + 24, ly, se->hollow ? "white" : se->color, se->color);
    sbf(b, "<text x=\"%.1f\" y=\"%.1f\">%s</text>\n", L + pw + 42, ly + 4, se->name);
  }
  sbf(b, "</svg>\n");
#undef PX
#undef PY
}

enum { S_L1 = 0, S_L, S_F, S_E, S_A, S_C, S_N };
static const char *snames[S_N] = {"Lemke, 1st start", "Lemke, &#8804; 3 restarts", "FIP",
                                  "Lemke or FIP", "auto", "has a solution"};
static const char *scolors[S_N] = {"#9ecae1", "#1f77b4", "#d62728", "#7f7f7f", "#2ca02c",
                                   "#000000"};

static int row_in(const cp_paper_row *r, int s) {
  switch (s) {
  case S_L1: return lemke_first(r);
  case S_L: return r->lemke == CP_PAPER_SOLVED;
  case S_F: return r->fip == CP_PAPER_SOLVED;
  case S_E: return r->lemke == CP_PAPER_SOLVED || r->fip == CP_PAPER_SOLVED;
  case S_A: return r->autos == CP_PAPER_SOLVED;
  default: return r->cert == CP_PAPER_CERT_SOLVABLE;
  }
}

char *cp_paper_svg_fraction_size(const cp_paper_study *st) {
  sb b = {0};
  static series S[S_N + 2];
  memset(S, 0, sizeof S);
  int sizes[256];
  int nsz = sizes_of(st, sizes, 256);
  for (int s = 0; s < S_N; s++) {
    S[s].name = snames[s];
    S[s].color = scolors[s];
    S[s].dashed = s == S_C;
    for (int k = 0; k < nsz; k++) {
      int n = 0, c = 0;
      for (int i = 0; i < st->n_rows; i++)
        if (st->rows[i].size == sizes[k]) n++, c += row_in(&st->rows[i], s);
      S[s].x[k] = sizes[k];
      S[s].y[k] = frac(c, n);
    }
    S[s].n = nsz;
  }
  S[S_N].name = "paper: Lemke";
  S[S_N].color = "#1f77b4";
  S[S_N + 1].name = "paper: FIP";
  S[S_N + 1].color = "#d62728";
  for (int k = 0; k < PAPER_T1_ROWS; k++) {
    S[S_N].x[k] = S[S_N + 1].x[k] = paper_table1[k].size;
    S[S_N].y[k] = paper_table1[k].lf;
    S[S_N + 1].y[k] = paper_table1[k].ff;
  }
  S[S_N].n = S[S_N + 1].n = PAPER_T1_ROWS;
  S[S_N].hollow = S[S_N + 1].hollow = 1;
  S[S_N].dashed = S[S_N + 1].dashed = 1;
  svg_plot(&b, "Fraction of data sets solved against LCP size", "LCP size (dimension of M)",
           "fraction solved", 0, 180, 0, 1.02, S, S_N + 2);
  return sb_done(&b);
}

char *cp_paper_svg_fraction_mu(const cp_paper_study *st) {
  sb b = {0};
  static series S[S_N];
  memset(S, 0, sizeof S);
  for (int s = 0; s < S_N; s++) {
    S[s].name = snames[s];
    S[s].color = scolors[s];
    S[s].dashed = s == S_C;
    for (int j = 0; j < CP_PAPER_NMU; j++) {
      int n = 0, c = 0;
      for (int i = 0; i < st->n_rows; i++)
        if (st->rows[i].mu_index == j) n++, c += row_in(&st->rows[i], s);
      S[s].x[j] = cp_paper_mu(j);
      S[s].y[j] = frac(c, n);
    }
    S[s].n = CP_PAPER_NMU;
  }
  svg_plot(&b, "Fraction of data sets solved against the friction coefficient",
           "friction coefficient mu", "fraction solved", 0, 1.05, 0, 1.02, S, S_N);
  return sb_done(&b);
}

char *cp_paper_svg_iterations_mu(const cp_paper_study *st) {
  sb b = {0};
  static series S[3];
  memset(S, 0, sizeof S);
  S[0].name = "Lemke (all starts)";
  S[0].color = scolors[S_L];
  S[1].name = "Lemke, 1st start";
  S[1].color = scolors[S_L1];
  S[2].name = "FIP";
  S[2].color = scolors[S_F];
  double ymax = 1;
  for (int j = 0; j < CP_PAPER_NMU; j++) {
    double sum[3] = {0, 0, 0};
    int n[3] = {0, 0, 0};
    for (int i = 0; i < st->n_rows; i++) {
      const cp_paper_row *r = &st->rows[i];
      if (r->mu_index != j) continue;
      if (r->lemke == CP_PAPER_SOLVED) sum[0] += r->lemke_iters, n[0]++;
      if (lemke_first(r)) sum[1] += r->lemke_iters, n[1]++;
      if (r->fip == CP_PAPER_SOLVED) sum[2] += r->fip_iters, n[2]++;
    }
    for (int s = 0; s < 3; s++) {
      S[s].x[j] = cp_paper_mu(j);
      S[s].y[j] = n[s] ? sum[s] / n[s] : NAN;
      if (n[s]) ymax = fmax(ymax, S[s].y[j]);
    }
  }
  for (int s = 0; s < 3; s++) S[s].n = CP_PAPER_NMU;
  svg_plot(&b, "Average iterations of the solved data sets against mu", "friction coefficient mu",
           "average iterations (solved data sets)", 0, 1.05, 0, ymax * 1.1, S, 3);
  return sb_done(&b);
}

char *cp_paper_format_headline(const cp_paper_study *st, const char *out_dir) {
  sb b = {0};
  agg a = {0};
  for (int i = 0; i < st->n_rows; i++) agg_add(&a, &st->rows[i]);
  sbf(&b,
      "%d data sets from %d problems (seed %llu): Lemke 1st start %d, with restarts %d, "
      "FIP %d, either %d, auto %d; certificate: %d solvable, %d none, %d undecided.\n"
      "Solving took %.1f s on %d worker%s; reports in %s/\n",
      st->n_rows, st->n_problems, (unsigned long long)st->opt.seed, a.lemke1, a.lemke, a.fip,
      a.either, a.autos, a.solvable, a.none, a.undecided, st->run_s, st->opt.jobs,
      st->opt.jobs == 1 ? "" : "s", out_dir);
  return sb_done(&b);
}

/* ------------------------------------------------------------------------ */
/* Writing                                                                  */
/* ------------------------------------------------------------------------ */

int cp_paper_write_reports(const cp_paper_study *st, const char *out_dir, cp_error *err) {
  struct {
    const char *name;
    char *(*fn)(const cp_paper_study *);
  } files[] = {
      {"datasets.csv", cp_paper_format_csv},
      {"table1.md", cp_paper_format_table1_md},
      {"table1.csv", cp_paper_format_table1_csv},
      {"problems.md", cp_paper_format_problems_md},
      {"summary.md", cp_paper_format_summary_md},
      {"fraction_solved_size.svg", cp_paper_svg_fraction_size},
      {"fraction_solved_mu.svg", cp_paper_svg_fraction_mu},
      {"iterations_mu.svg", cp_paper_svg_iterations_mu},
  };
  for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
    char *text = files[i].fn(st);
    int rc = cp_paper_write_file(out_dir, files[i].name, text, err);
    free(text);
    if (rc) return -1;
  }
  return 0;
}
