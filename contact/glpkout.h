/// \file contact/glpkout.h
/// Where GLPK's terminal output goes. GLPK (used by contact/certify.c and
/// contact/fip.c) prints to stdout by default: progress lines, warnings
/// such as "invalid scale factor", and, before its error hook runs, the text
/// of internal errors and failed assertions. complan's commands promise
/// nothing but their JSON document on stdout, so every GLPK call in complan
/// runs with a terminal hook (glp_term_hook) that hands each piece of text
/// to cp_glpk_forward, and from there to the sink set here: by default none
/// (the text is dropped); the command line's `--verbose` sets a sink that
/// writes to stderr.
///
/// The sink is process-wide, set once before solving (not thread-safe to
/// change while another thread solves). The library itself never prints.
///
/// Fault injection (tests only). GLPK's internal errors are rare and no
/// known input provokes one inside certify, yet the rule "never a proof of
/// infeasibility after a GLPK error" must be tested. Every guarded GLPK
/// solve of complan (FIP's LPs, certify's MIPs, stability's LPs and MILPs) asks cp_glpk_fault(where)
/// once its problem is loaded; when a test has set a fault function and it
/// returns nonzero, the caller raises a genuine GLPK error (glp_error) at that
/// point, which takes the same path (error hook, longjmp, glp_free_env) as
/// an internal failure of GLPK would. Without a fault function (always, in
/// the CLI) cp_glpk_fault returns 0.
#ifndef CP_CONTACT_GLPKOUT_H
#define CP_CONTACT_GLPKOUT_H

#ifdef __cplusplus
extern "C" {
#endif

/// Receives one piece of GLPK's terminal output (NUL-terminated; pieces may
/// be partial lines).
typedef void (*cp_glpk_sink)(void *ctx, const char *text);

/// Sets the sink of GLPK's terminal output; NULL drops it (the default).
void cp_glpk_set_sink(cp_glpk_sink sink, void *ctx);

/// 1 when a sink is set: callers may then ask GLPK for its messages
/// (msg_lev), which otherwise would be formatted only to be dropped.
int cp_glpk_has_sink(void);

/// A glp_term_hook: passes text to the sink and returns 1 ("handled"), so
/// that GLPK never writes to stdout itself. `info` is unused.
int cp_glpk_forward(void *info, const char *text);

/// Decides whether the guarded GLPK call named `where` fails (tests).
typedef int (*cp_glpk_fault_fn)(void *ctx, const char *where);

/// Sets the fault function; NULL (the default) injects nothing.
void cp_glpk_set_fault(cp_glpk_fault_fn fn, void *ctx);

/// 1 when the fault function asks the call `where` to fail, else 0.
/// `where`: "fip phase I", "fip crossover", "certify", "stability lp",
/// "stability milp".
int cp_glpk_fault(const char *where);

/// Releases the calling thread's GLPK environment (glp_free_env), which
/// GLPK creates on a thread's first GLPK call and keeps until the thread
/// calls this: a worker thread that ends without it leaks it (5 296 bytes,
/// reported by LeakSanitizer). Every thread of complan that may have run a
/// solver calls it before it ends; it does nothing when the thread has no
/// environment. Not to be called while a GLPK object of this thread is in use.
void cp_glpk_thread_end(void);

#ifdef __cplusplus
}
#endif
#endif
