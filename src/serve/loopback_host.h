#pragma once
// Which names a server bound to loopback answers to. A page on evil.example whose name resolves to 127.0.0.1 (DNS
// rebinding) makes the browser send "Host: evil.example"; names that merely start with "127." (127.evil.example,
// 127.0.0.1.nip.io) or hide another host behind '@' must fail too. Only these pass, each with an optional
// ":port": localhost, a numeric IPv4 address in 127.0.0.0/8, and [::1].
#include <string_view>

namespace minigen {

// A bind address that is loopback: "localhost", "::1" or a numeric 127.0.0.0/8 address.
bool is_loopback_address(std::string_view address);

// A Host header's value that names this machine's loopback interface (see above). Case-insensitive.
bool is_loopback_host_header(std::string_view host);

}  // namespace minigen
