// The translation unit that compiles the test programs' precompiled header (tests/CMakeLists.txt,
// test_headers); it holds nothing else.
