/* placeholder */
#include "contact/solve.h"
