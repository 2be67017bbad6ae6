/// \file tests/harden/oomhook.h
/// Allocation-failure injection (tests/harden/oomhook.c): counts the
/// allocations of complan's code, jansson and libxml2 while armed and makes
/// the fail_at-th one return NULL.
#ifndef CP_TESTS_HARDEN_OOMHOOK_H
#define CP_TESTS_HARDEN_OOMHOOK_H

typedef struct cpt_oom_state {
  int armed;     ///< 1: counting (and failing)
  long count;    ///< allocations since cpt_oom_arm
  long fail_at;  ///< this allocation (1-based) fails; 0: none
  int failed;    ///< 1 once the failure was injected
} cpt_oom_state;

extern cpt_oom_state cpt_oom;

/// Starts counting from 0; allocation number fail_at (0: none) will fail.
void cpt_oom_arm(long fail_at);

/// Stops counting; returns the number of allocations made while armed.
long cpt_oom_disarm(void);

/// Suspends counting for the test's own allocations; returns what
/// cpt_oom_resume needs. (Functions, not stores to cpt_oom: the compiler
/// may move a plain store across a call of malloc.)
int cpt_oom_pause(void);
void cpt_oom_resume(int armed);

#endif
