// The "accelerator" object of a profile (private to trainers/): parsing and
// canonical printing. Schema and sources: docs/profiles.md ("accelerator").
#ifndef XWIRES_TRAINERS_PROFILE_ACCEL_H_
#define XWIRES_TRAINERS_PROFILE_ACCEL_H_

#include <nlohmann/json.hpp>

#include "profile_schema.h"
#include "xwires/trainers/profile.h"

namespace xw::profile_schema {

// Reads the accelerator object into p->accel, p->mixed_precision
// and p->loss_scaling. Every key of the object is required (the
// accumulation object's keys depend on its "kind"); errors name the path.
Status ParseAccelerator(Reader& r, Profile* p);

// The object's canonical JSON; IsDefaultAccelerator(p) profiles print none.
nlohmann::ordered_json AcceleratorToJson(const Profile& p);
bool IsDefaultAccelerator(const Profile& p);

}  // namespace xw::profile_schema

#endif  // XWIRES_TRAINERS_PROFILE_ACCEL_H_
