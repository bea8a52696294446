// The umbrella header alone, as the first and only include of a client's file: it must compile
// with the library's public include path and nothing else (tests/CMakeLists.txt, umbrella_alone).
#include <colflow/colflow.hpp>
