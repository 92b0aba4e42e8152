// Types shared by the parts of the link bridge (rtl/bridge). The link protocol's constants are not
// here: they come from rtl/params.json ("link"), as LINK_* in tess_params_pkg.
// The enums name the values of plain logic fields and ports (see tess_core_pkg for why).
package tess_bridge_pkg;

  // What the request sequencer (tess_link_seq) fills into a reply (tess_link_reply).
  typedef enum logic [1:0] {
    FILL_INFO,     // INFO: the chip's parameters
    FILL_CTL,      // CTRL_READ: a control register or a bridge register
    FILL_STATS,    // STATS: a tile's counters
    FILL_RESULT    // WAIT: the run result
  } fill_e;

endpackage
