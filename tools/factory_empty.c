/* factory_empty.c -- an empty factory table: links the generator
 * (tools/factory_gen.c), which writes the real one (build/gen/factory.c). */
#include "assemble_internal.h"

const asm_factory_entry spc_factory_table[] = {{0, 0, NULL}};
const int spc_factory_n = 0;
