//! Rows read into structs: what `#[derive(sqlx::FromRow)]` does, without sqlx's macro crate.
//!
//! The derive (like `sqlx::migrate!`, see `store/migrations.rs`) comes with sqlx's macro crate,
//! which compiles sqlx, SQLite and the PostgreSQL driver a second time, for the build host: about
//! a tenth of the test command's cold build on 2 cores. [`from_row!`] wraps a struct definition
//! and reads each field from the column of its name, on either backend.

/// `from_row! { struct Row { id: i64, name: String } }`: the struct as written, and a
/// `sqlx::FromRow` impl for every database whose rows decode each field's type. A field read
/// from a column of another name says so: `user as "user_name": Option<String>`.
macro_rules! from_row {
    (
        $(#[$meta:meta])*
        $vis:vis struct $name:ident {
            $($(#[$field_meta:meta])* $field_vis:vis $field:ident $(as $column:literal)? : $ty:ty),*
            $(,)?
        }
    ) => {
        $(#[$meta])*
        $vis struct $name {
            $($(#[$field_meta])* $field_vis $field: $ty),*
        }

        impl<'r, R: sqlx::Row> sqlx::FromRow<'r, R> for $name
        where
            &'r str: sqlx::ColumnIndex<R>,
            $($ty: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>),*
        {
            fn from_row(row: &'r R) -> Result<Self, sqlx::Error> {
                Ok(Self {
                    $($field: sqlx::Row::try_get(row, $crate::rows::column!($field $(, $column)?))?),*
                })
            }
        }
    };
}

/// The column a field of [`from_row!`] is read from: its own name unless it names another.
macro_rules! column {
    ($field:ident) => {
        stringify!($field)
    };
    ($field:ident, $column:literal) => {
        $column
    };
}

pub(crate) use {column, from_row};

#[cfg(test)]
mod tests {
    use sqlx::sqlite::SqlitePoolOptions;

    super::from_row! {
        #[derive(Debug, PartialEq)]
        struct Pair {
            id: i64,
            name: Option<String>,
            label as "tag": String,
        }
    }

    #[tokio::test]
    async fn each_field_is_read_from_the_column_of_its_name_whatever_the_order() {
        let pool = SqlitePoolOptions::new()
            .connect("sqlite::memory:")
            .await
            .unwrap();
        let row: Pair = sqlx::query_as("SELECT 'b' AS name, 7 AS id, 'x' AS tag")
            .fetch_one(&pool)
            .await
            .unwrap();
        assert_eq!(
            row,
            Pair {
                id: 7,
                name: Some("b".into()),
                label: "x".into()
            }
        );
        let missing = sqlx::query_as::<_, Pair>("SELECT 7 AS id, 'x' AS tag")
            .fetch_one(&pool)
            .await
            .unwrap_err();
        assert!(missing.to_string().contains("name"), "{missing}");
    }
}
