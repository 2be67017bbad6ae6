#include <criterion/criterion.h>
#include "tests/support.h"
Test(placeholder_cli_lcp, nothing) { cr_assert(1); }
