// Catch2 entry point for every unit test of the project.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
