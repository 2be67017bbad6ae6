/* placeholder: being written */
#include <stdio.h>
#include "planner/cli.h"
int cp_cli_experiment(int argc, char **argv) { (void)argc; (void)argv; fputs("complan: experiment: not available yet\n", stderr); return 2; }
