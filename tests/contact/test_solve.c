#include <criterion/criterion.h>
#include "tests/support.h"
Test(placeholder_solve, nothing) { cr_assert(1); }
