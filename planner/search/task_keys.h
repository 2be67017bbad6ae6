/* Keys of a task's "search" object parsed outside task.c (which is at its
 * size limit): not installed, for task.c only. */
#ifndef CP_SEARCH_TASK_KEYS_H
#define CP_SEARCH_TASK_KEYS_H

#include <jansson.h>

#include "planner/search/task.h"

/// The "search" keys of object v that task.c leaves to this file
/// ("connect", "goal_k", "drop_rejected"); 0, or -1 with err set (path "search.KEY").
int cp_task_parse_search_keys(cp_task *t, const json_t *v, cp_error *err);

/// search.steer ("sample", the default, or "local": planner/search/
/// task_actions.c) of object v; 0, or -1 with err set (path "search.steer").
int cp_task_parse_steer(cp_task *t, const json_t *v, cp_error *err);

#endif
