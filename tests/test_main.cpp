// test_main.cpp - the Catch2 main of mans_tests (one executable, one ctest entry).
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
