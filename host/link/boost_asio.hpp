// Boost.Asio for this project: Boost 1.74's awaitable.hpp uses std::exchange without including
// <utility>, which GCC 12 in C++20 mode does not pull in; include Asio only through this header.
#pragma once

// clang-format off
#include <utility>
#include <boost/asio.hpp>
// clang-format on
