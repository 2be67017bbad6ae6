#include "models/shape.h"

#include <math.h>
#include <string.h>

#include "models/mesh.h"
#include "models/vec3.h"

const char *cp_shape_type_name(cp_shape_type t) {
  switch (t) {
  case CP_SHAPE_BOX: return "box";
  case CP_SHAPE_SPHERE: return "sphere";
  case CP_SHAPE_CYLINDER: return "cylinder";
  case CP_SHAPE_CAPSULE: return "capsule";
  case CP_SHAPE_PLANE: return "plane";
  case CP_SHAPE_MESH: return "mesh";
  case CP_SHAPE_NONE: break;
  }
  return "none";
}

int cp_shape_inertia(const cp_shape *s, double m, double *In) {
  memset(In, 0, 9 * sizeof *In);
  double r = s->radius, L = s->length;
  switch (s->type) {
  case CP_SHAPE_BOX: {
    double a = s->size[0], b = s->size[1], c = s->size[2];
    In[0] = m / 12 * (b * b + c * c);
    In[4] = m / 12 * (a * a + c * c);
    In[8] = m / 12 * (a * a + b * b);
    return 0;
  }
  case CP_SHAPE_SPHERE:
    In[0] = In[4] = In[8] = 0.4 * m * r * r;
    return 0;
  case CP_SHAPE_CYLINDER:
    In[0] = In[4] = m * (3 * r * r + L * L) / 12;
    In[8] = 0.5 * m * r * r;
    return 0;
  case CP_SHAPE_CAPSULE: {
    // Volumes: cylinder pi r^2 L, two caps 4/3 pi r^3; masses in proportion.
    double mc = m * L / (L + 4.0 * r / 3.0), ms = m - mc;
    In[8] = mc * r * r / 2 + ms * 0.4 * r * r;
    In[0] = In[4] = mc * (L * L / 12 + r * r / 4) +
                  ms * (0.4 * r * r + L * L / 4 + 3 * L * r / 8);
    return 0;
  }
  case CP_SHAPE_PLANE:
  case CP_SHAPE_MESH:
  case CP_SHAPE_NONE:
    break;
  }
  return -1;
}

double cp_shape_bounding_radius(const cp_shape *s) {
  switch (s->type) {
  case CP_SHAPE_BOX: return 0.5 * cp_v3_norm(s->size);
  case CP_SHAPE_SPHERE: return s->radius;
  case CP_SHAPE_CYLINDER: return hypot(s->radius, 0.5 * s->length);
  case CP_SHAPE_CAPSULE: return 0.5 * s->length + s->radius;
  case CP_SHAPE_MESH: return s->mesh ? s->mesh->radius : 0.0;
  case CP_SHAPE_PLANE: return INFINITY;
  case CP_SHAPE_NONE: break;
  }
  return 0.0;
}
