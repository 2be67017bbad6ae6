#include "planner/cli.h"
int cp_cli_main(int argc, char **argv) { (void)argc; (void)argv; return 0; }
