// set: held-out
// expect: panic rust_index::nth_field
// Reads the nth comma-separated field of a CSV row; a short row has fewer fields.
fn nth_field(row: &str, n: usize) -> &str {
    let fields: Vec<&str> = row.split(',').collect();
    fields[n] // CULPRIT
}

fn main() {
    let rows = ["a,b,c,d", "e,f"];
    for row in rows {
        println!("{}", nth_field(row, 3));
    }
}
