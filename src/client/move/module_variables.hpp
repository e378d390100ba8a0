// Module variables across a session move (docs/migration.md): their
// contents read on the old server, to be written when their modules load on
// the new one; and the variables whose address the application holds,
// found again there, the old address standing for the new.
#pragma once
#include <cstdint>
#include <utility>
#include <vector>

#include "client/core/given_variables.hpp"
#include "client/core/module_registry.hpp"

namespace rgpu::client {

class Session;

using VarContents = std::vector<std::pair<VarEntry*, std::vector<uint8_t>>>;

// The device's module variables; refused (MoveRefusal) for a managed one,
// whose memory the host reaches too.
std::vector<std::pair<VarEntry*, LoadedVar>> movable_vars(int device);
// The variables' contents as the application left them: loaded again on
// the target they would have their initial values.
VarContents read_vars(Session& from, int remote, const std::vector<std::pair<VarEntry*, LoadedVar>>& vars);

struct GivenContents {
  GivenVariable var;
  std::vector<uint8_t> bytes;
};

// The variables whose address the application holds, with their contents
// where they lie now (an earlier move's target, for one moved before).
std::vector<GivenContents> read_given(Session& from, int remote, int device);
// After the commit: each found again where its module loads on the target,
// its contents written there, and the application's address made to stand
// for it there. Never refuses: a variable that cannot be kept is logged.
void keep_given(const std::vector<GivenContents>& given, Session& to, int gpu);

}  // namespace rgpu::client
