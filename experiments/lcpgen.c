/* placeholder: being written */
#include "experiments/lcpgen.h"
