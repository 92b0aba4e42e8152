// Constants and the CRC of the link bridge (docs/link-protocol.md, the device side).
package tess_bridge_pkg;

  // Opcodes and status codes of the link protocol (host/link/frame.hpp).
  localparam logic [7:0] OP_INFO       = 8'h01;
  localparam logic [7:0] OP_MEM_READ   = 8'h02;
  localparam logic [7:0] OP_MEM_WRITE  = 8'h03;
  localparam logic [7:0] OP_CTRL_READ  = 8'h04;
  localparam logic [7:0] OP_CTRL_WRITE = 8'h05;
  localparam logic [7:0] OP_RUN        = 8'h06;
  localparam logic [7:0] OP_WAIT       = 8'h07;
  localparam logic [7:0] OP_RESET      = 8'h08;
  localparam logic [7:0] OP_STATS      = 8'h09;
  localparam logic [7:0] OP_CONSOLE    = 8'h0A;

  localparam logic [15:0] ST_OK           = 16'd0;
  localparam logic [15:0] ST_BAD_CRC      = 16'd1;
  localparam logic [15:0] ST_UNKNOWN_OP   = 16'd2;
  localparam logic [15:0] ST_TOO_LONG     = 16'd3;
  localparam logic [15:0] ST_OUT_OF_RANGE = 16'd4;
  localparam logic [15:0] ST_BUSY         = 16'd5;
  localparam logic [15:0] ST_DEVICE_ERROR = 16'd6;
  localparam logic [15:0] ST_RUNNING      = 16'd8;
  localparam logic [15:0] ST_NOT_RUNNING  = 16'd9;
  localparam logic [15:0] ST_BAD_VERSION  = 16'd10;

  localparam logic [7:0] PROTOCOL_VERSION = 8'd2;  // host/link/frame.hpp kProtocolVersion
  localparam logic [31:0] MAGIC = 32'h6B4C7354;  // "TsLk" as a little-endian word

  // CRC-32 (IEEE 802.3, reflected polynomial 0xEDB88320) of one more byte; start from
  // 0xFFFFFFFF, xor the result with 0xFFFFFFFF (zlib's crc32).
  function automatic logic [31:0] crc32_byte(input logic [31:0] crc, input logic [7:0] b);
    logic [31:0] c;
    c = crc ^ {24'd0, b};
    for (int i = 0; i < 8; i++) begin
      c = c[0] ? ((c >> 1) ^ 32'hEDB88320) : (c >> 1);
    end
    crc32_byte = c;
  endfunction

endpackage
