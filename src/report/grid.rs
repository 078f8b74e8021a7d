//! The one setup of a terminal table (comfy-table), shared by the range's,
//! the history's and the demo's tables, so that they look alike and colour
//! only when asked.

use comfy_table::{presets::UTF8_FULL_CONDENSED, ContentArrangement, Row, Table};

/// An empty table with `header`: condensed UTF-8 borders, wrapped to
/// `width` (`None`: its natural width, never wrapped), styled only with
/// `color` (else plain, whatever the output is).
pub(super) fn table(header: impl Into<Row>, color: bool, width: Option<u16>) -> Table {
    let mut table = Table::new();
    table.load_preset(UTF8_FULL_CONDENSED);
    match width {
        Some(w) => {
            table
                .set_content_arrangement(ContentArrangement::Dynamic)
                .set_width(w);
        }
        None => {
            table.set_content_arrangement(ContentArrangement::Disabled);
        }
    }
    if color {
        table.enforce_styling();
    } else {
        table.force_no_tty();
    }
    table.set_header(header);
    table
}
