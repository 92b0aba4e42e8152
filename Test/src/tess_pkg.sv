// Shared types of the tessera RTL. Numeric chip parameters come from the generated
// tess_params_pkg (rtl/params.json); this package holds the enumerations the modules share.
package tess_pkg;

  // Operations of the FP units (tess_fpu: one-round ops; tess_fpu_divsqrt: long ops).
  typedef enum logic [4:0] {
    FPU_ADD,      // a + b
    FPU_SUB,      // a - b
    FPU_MUL,      // a * b
    FPU_MADD,     // a * b + c
    FPU_MSUB,     // a * b - c
    FPU_NMSUB,    // -(a * b) + c
    FPU_NMADD,    // -(a * b) - c
    FPU_SGNJ,
    FPU_SGNJN,
    FPU_SGNJX,
    FPU_MIN,
    FPU_MAX,
    FPU_CVT_W_S,  // float a -> int32
    FPU_CVT_WU_S, // float a -> uint32
    FPU_CVT_S_W,  // int32 a -> float
    FPU_CVT_S_WU, // uint32 a -> float
    FPU_MV_X_W,   // bits of float a -> integer register
    FPU_MV_W_X,   // integer a -> bits of float register
    FPU_EQ,
    FPU_LT,
    FPU_LE,
    FPU_CLASS,
    FPU_DIV,      // long op (tess_fpu_divsqrt)
    FPU_SQRT      // long op (tess_fpu_divsqrt), operand a
  } fpu_op_e;

  // Rounding modes (instruction rm field / frm); the core resolves DYN before the FPU.
  typedef enum logic [2:0] {
    RM_RNE = 3'd0,
    RM_RTZ = 3'd1,
    RM_RDN = 3'd2,
    RM_RUP = 3'd3,
    RM_RMM = 3'd4,
    RM_DYN = 3'd7
  } rm_e;

  // fflags bit positions.
  localparam int FLAG_NX = 0;
  localparam int FLAG_UF = 1;
  localparam int FLAG_OF = 2;
  localparam int FLAG_DZ = 3;
  localparam int FLAG_NV = 4;

endpackage
