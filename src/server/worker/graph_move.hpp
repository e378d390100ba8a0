// What of a session's graphs cannot move (graph_move_handlers.cpp): the
// move's early check (move_handlers.cpp) names it with the rest.
#pragma once
#include <string>
#include <vector>

#include "server/worker/session_context.hpp"

namespace rgpu::server {

// Each reason, as "a graph with host nodes ..."; none when they can move.
std::vector<std::string> graph_move_reasons(SessionContext& s);

}  // namespace rgpu::server
