/* placeholder: being written */
#include <stdio.h>
#include "planner/cli.h"
int cp_cli_contacts(int argc, char **argv) { (void)argc; (void)argv; fputs("complan: contacts: not available yet\n", stderr); return 2; }
