#include "transport/ucx/ucx_listener.hpp"

#include "transport/ucx/ucx_connection.hpp"

namespace rgpu::transport::ucx {

std::unique_ptr<Connection> UcxListener::accept() { return std::make_unique<UcxConnection>(tcp_->accept()); }

}  // namespace rgpu::transport::ucx
