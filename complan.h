/// \file complan.h
/// complan's API in one include: `#include <complan/complan.h>` with the
/// flags of `pkg-config --cflags complan` (docs/architecture.md lists the
/// rooms). Every installed header is included here, lowest floor first; the
/// internal ones (planner/search/search_impl.h, planner/sim/stepcheck.h,
/// planner/store/store_impl.h, models/grow.h, the command line's headers)
/// are not installed. tests/install/install_test.sh checks both.
#ifndef CP_COMPLAN_H
#define CP_COMPLAN_H

/* models/: scenes, bodies, chains, geometry, contact generation */
#include "models/error.h"
#include "models/vec3.h"
#include "models/hash.h"
#include "models/clock.h"
#include "models/jsonread.h"
#include "models/shape.h"
#include "models/chain.h"
#include "models/scene.h"
#include "models/system.h"
#include "models/collide.h"
#include "models/contactgen.h"
#include "models/manifold.h"
#include "models/urdf.h"
#include "models/ranges.h"
#include "models/mesh.h"

/* contact/: the complementarity layer */
#include "contact/lcp.h"
#include "contact/lcpio.h"
#include "contact/lemke.h"
#include "contact/fip.h"
#include "contact/certify.h"
#include "contact/solve.h"
#include "contact/pyramid.h"
#include "contact/dynamics.h"
#include "contact/cone.h"
#include "contact/problem.h"
#include "contact/quasistatic.h"
#include "contact/stability.h"
#include "contact/glpkout.h"

/* planner/: the rooms, lowest first */
#include "planner/sim/world.h"
#include "planner/sim/simulate.h"
#include "planner/sim/statelayout.h"
#include "planner/sim/actuate.h"
#include "planner/io/outfile.h"
#include "planner/io/csv.h"
#include "planner/search/goal.h"
#include "planner/search/task.h"
#include "planner/search/nn.h"
#include "planner/search/search.h"
#include "planner/assembly/assembly.h"
#include "planner/store/store.h"
#include "planner/store/assembly.h"
#include "planner/store/sequence.h"
#include "planner/plan/plan.h"
#include "planner/plan/mpi.h"
#include "planner/sequence/sequence.h"
#include "planner/view/viewer.h"
#include "planner/view/assembly.h"
#include "planner/replay/replay.h"
#include "planner/replay/sequence_run.h"
#include "planner/replay/sequence_replay.h"

#endif
