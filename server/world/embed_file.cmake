# Writes a C file defining `const char NAME[]`: the bytes of INPUT and a terminating NUL, so a
# committed file (the default arena, examples/worlds/arena.json) is compiled into the binary as it
# is. Bytes rather than a string literal: ISO C only promises 4095-character literals.
# With -DSIZE_NAME=symbol the array is `const unsigned char` (a binary input, whose bytes above 127
# a char cannot hold) and `const size_t SIZE_NAME` its size without the NUL (strlen cannot
# measure it).
# Usage: cmake -DINPUT=file -DOUTPUT=file.c -DNAME=symbol [-DSIZE_NAME=symbol] -DHEADER=header.h
#        -P embed_file.cmake
set(type "char")
if(SIZE_NAME)
  set(type "unsigned char")
endif()
file(READ ${INPUT} hex HEX)
string(LENGTH "${hex}" hex_length)
math(EXPR size "${hex_length} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
# 16 bytes a line (CMake's regular expressions have no {n})
string(REPEAT "0x[0-9a-f][0-9a-f]," 16 line)
string(REGEX REPLACE "(${line})" "\\1\n    " bytes "${bytes}")
file(WRITE ${OUTPUT}.tmp
     "/* Generated from ${INPUT} by embed_file.cmake at build time: ${size} bytes. */\n"
     "#include \"${HEADER}\"\n\n"
     "const ${type} ${NAME}[] = {\n    ${bytes}0x00};\n")
if(SIZE_NAME)
  file(APPEND ${OUTPUT}.tmp "const size_t ${SIZE_NAME} = ${size};\n")
endif()
# Only a changed file is rewritten, so an unchanged input does not recompile anything.
file(COPY_FILE ${OUTPUT}.tmp ${OUTPUT} ONLY_IF_DIFFERENT)
file(REMOVE ${OUTPUT}.tmp)
